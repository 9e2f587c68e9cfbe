package proc

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestCappedBuffer(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
		total     int64
	}{
		{"under limit", 10, []string{"abc", "def"}, "abcdef", false, 6},
		{"exactly limit", 6, []string{"abc", "def"}, "abcdef", false, 6},
		{"split write", 4, []string{"abc", "def"}, "abcd", true, 6},
		{"after full", 3, []string{"abc", "d"}, "abc", true, 4},
		{"empty write after full", 3, []string{"abc", ""}, "abc", false, 3},
		{"no limit", 0, []string{strings.Repeat("x", 100)}, strings.Repeat("x", 100), false, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewCappedBuffer(tt.limit)
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v; a capped buffer must accept everything", n, err)
				}
			}
			if b.String() != tt.want || string(b.Bytes()) != tt.want {
				t.Errorf("kept %q, want %q", b.String(), tt.want)
			}
			if b.Truncated() != tt.truncated {
				t.Errorf("Truncated = %v", b.Truncated())
			}
			if b.Total() != tt.total {
				t.Errorf("Total = %d", b.Total())
			}
		})
	}
}

func TestCappedBufferConcurrentWrites(t *testing.T) {
	b := NewCappedBuffer(1000)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("x"))
			}
		}()
	}
	wg.Wait()
	if len(b.Bytes()) != 1000 || !b.Truncated() || b.Total() != 2000 {
		t.Fatalf("len=%d truncated=%v total=%d", len(b.Bytes()), b.Truncated(), b.Total())
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name     string
		lines    int
		maxBytes int
		writes   []string
		want     []string
	}{
		{"keeps last lines", 2, 100, []string{"a\nb\nc\n"}, []string{"b", "c"}},
		{"lines across writes", 3, 100, []string{"he", "llo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"partial last line", 3, 100, []string{"a\nb"}, []string{"a", "b"}},
		{"partial counts toward lines", 2, 100, []string{"a\nb\nc"}, []string{"b", "c"}},
		{"byte budget drops old lines", 10, 6, []string{"aaa\nbbb\nccc\n"}, []string{"bbb", "ccc"}},
		{"overlong line keeps its end", 5, 4, []string{"0123456789\n"}, []string{"6789"}},
		{"overlong partial keeps its end", 5, 4, []string{"0123456789"}, []string{"6789"}},
		{"crlf", 5, 100, []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"empty", 5, 100, nil, []string{}},
		{"flood", 3, 100, []string{strings.Repeat("line\n", 100000) + "last\n"}, []string{"line", "line", "last"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := NewTailBuffer(tt.lines, tt.maxBytes)
			for _, w := range tt.writes {
				if n, err := tb.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := tb.Lines(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Lines = %q, want %q", got, tt.want)
			}
			if got := tb.String(); got != strings.Join(tt.want, "\n") {
				t.Errorf("String = %q", got)
			}
		})
	}
}

func TestTailBufferConcurrent(t *testing.T) {
	tb := NewTailBuffer(5, 1000)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				fmt.Fprintf(tb, "g%d-%d\n", i, j)
				_ = tb.Lines()
			}
		}(i)
	}
	wg.Wait()
	if got := len(tb.Lines()); got != 5 {
		t.Fatalf("kept %d lines, want 5", got)
	}
}

func FuzzTailBuffer(f *testing.F) {
	f.Add([]byte("a\nb\nc"), 2, 10)
	f.Add([]byte("\r\n\n\n"), 1, 1)
	f.Fuzz(func(t *testing.T, data []byte, lines, maxBytes int) {
		if lines > 1000 || maxBytes > 1<<16 {
			return
		}
		tb := NewTailBuffer(lines, maxBytes)
		// Write in two chunks to exercise partial lines.
		half := len(data) / 2
		tb.Write(data[:half])
		tb.Write(data[half:])
		got := tb.Lines()
		wantLines := lines
		if wantLines <= 0 {
			wantLines = 20
		}
		if len(got) > wantLines {
			t.Fatalf("%d lines kept, limit %d", len(got), wantLines)
		}
		for _, l := range got {
			if strings.Contains(l, "\n") {
				t.Fatalf("line %q contains a newline", l)
			}
		}
	})
}

// An overlong line keeps its end through Cut, so a cut that would leave
// part of a secret can drop it: a complete line and the unfinished one.
func TestTailBufferCutsOverlongLinesWithCut(t *testing.T) {
	cut := func(s string, n int) string { return "…" + s[len(s)-n+3:] }
	b := NewTailBuffer(5, 16)
	b.Cut = cut
	b.Write([]byte("0123456789abcdefghij\n"))
	if got := b.Lines(); len(got) != 1 || got[0] != "…789abcdefghij" {
		t.Fatalf("complete line: %q", got)
	}
	b = NewTailBuffer(5, 16)
	b.Cut = cut
	b.Write([]byte(strings.Repeat("x", 20)))
	b.Write([]byte("TAIL"))
	if got := b.Lines(); len(got) != 1 || !strings.HasPrefix(got[0], "…") || !strings.HasSuffix(got[0], "xTAIL") {
		t.Fatalf("unfinished line: %q", got)
	}
}
