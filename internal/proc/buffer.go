package proc

import (
	"bytes"
	"strings"
	"sync"
)

// CappedBuffer is an io.Writer that keeps the first Limit bytes written to it
// and counts the rest, so a child's output can be captured without unbounded
// memory. Writes never fail (the child keeps running and its pipe keeps
// draining); Truncated reports whether anything was dropped. A Limit <= 0
// keeps everything. It is safe for concurrent use.
type CappedBuffer struct {
	Limit int

	mu        sync.Mutex
	buf       []byte
	total     int64
	truncated bool
}

// NewCappedBuffer returns a buffer keeping at most limit bytes.
func NewCappedBuffer(limit int) *CappedBuffer { return &CappedBuffer{Limit: limit} }

// Write keeps what fits under Limit and always reports len(p) written.
func (b *CappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	if b.Limit <= 0 {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	room := b.Limit - len(b.buf)
	if room <= 0 {
		if len(p) > 0 {
			b.truncated = true
		}
		return len(p), nil
	}
	if len(p) > room {
		b.buf = append(b.buf, p[:room]...)
		b.truncated = true
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Bytes returns the kept bytes (at most Limit). The slice must not be
// modified and is only valid until the next Write.
func (b *CappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

// String returns the kept bytes as a string.
func (b *CappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Truncated reports whether bytes beyond Limit were dropped.
func (b *CappedBuffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.truncated
}

// Total returns the number of bytes written, kept or not.
func (b *CappedBuffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// TailBuffer is an io.Writer that keeps the last lines written to it (at most
// a number of lines and a number of bytes), e.g. a server's stderr to quote
// when it dies. A line longer than the byte budget keeps its end. It is safe
// for concurrent use.
type TailBuffer struct {
	mu       sync.Mutex
	maxLines int
	maxBytes int
	// Cut returns the end of an overlong line, at most n bytes (nil: its
	// last n bytes). Set it, before the first Write, to a cut that never
	// keeps part of a secret (redact.Redactor.Suffix).
	Cut     func(s string, n int) string
	lines   []string // complete lines, oldest first
	size    int      // bytes in lines
	partial []byte   // the current unterminated line
}

// NewTailBuffer returns a buffer keeping the last `lines` lines and at most
// maxBytes bytes of them (values <= 0 default to 20 lines and 4 KiB).
func NewTailBuffer(lines, maxBytes int) *TailBuffer {
	if lines <= 0 {
		lines = 20
	}
	if maxBytes <= 0 {
		maxBytes = 4 << 10
	}
	return &TailBuffer{maxLines: lines, maxBytes: maxBytes}
}

// Write records p, splitting it into lines. It never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			if len(t.partial) > t.maxBytes {
				// Keep only the end of an overlong line.
				t.partial = append(t.partial[:0], t.cut(string(t.partial))...)
			}
			break
		}
		t.partial = append(t.partial, p[:i]...)
		t.push(string(trimCR(t.partial)))
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (t *TailBuffer) push(line string) {
	if len(line) > t.maxBytes {
		line = t.cut(line)
	}
	t.lines = append(t.lines, line)
	t.size += len(line)
	drop := 0
	for len(t.lines)-drop > t.maxLines || (t.size > t.maxBytes && len(t.lines)-drop > 1) {
		t.size -= len(t.lines[drop])
		drop++
	}
	if drop > 0 {
		// Reuse the backing array instead of growing it forever.
		t.lines = append(t.lines[:0], t.lines[drop:]...)
	}
}

// cut keeps the end of an overlong line.
func (t *TailBuffer) cut(s string) string {
	if t.Cut != nil {
		return t.Cut(s, t.maxBytes)
	}
	return s[len(s)-t.maxBytes:]
}

// Lines returns the kept lines, oldest first, including a final line that
// has no newline yet.
func (t *TailBuffer) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.lines)+1)
	out = append(out, t.lines...)
	if len(t.partial) > 0 {
		out = append(out, string(trimCR(t.partial)))
	}
	if extra := len(out) - t.maxLines; extra > 0 {
		out = out[extra:]
	}
	return out
}

// String returns the kept lines joined by newlines.
func (t *TailBuffer) String() string { return strings.Join(t.Lines(), "\n") }

func trimCR(p []byte) []byte {
	if len(p) > 0 && p[len(p)-1] == '\r' {
		return p[:len(p)-1]
	}
	return p
}
