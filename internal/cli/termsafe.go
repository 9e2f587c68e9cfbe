package cli

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// termWriter is under every stream a person reads: stderr, and stdout on a
// terminal. pflow's messages carry text from data — an MCP server's error
// or tool description, a command's stderr, an HTTP body, a workflow output
// — and a control character in it would drive the terminal: write the
// clipboard (OSC 52), retitle the window, erase a line and draw a fake
// "✓" over it. termWriter shows each such character escaped (\x1b, \r, \a,
// \u009b) and lets through only newline, tab, and pflow's own sequences:
// its colours while the stream has colour, and the "\r\x1b[K" that starts
// a redrawn progress line.
type termWriter struct {
	w      io.Writer
	colour func() bool // the stream has colour (asked each Write: --no-color is parsed later)
	redraw bool        // progress lines are redrawn on it (stderr on a terminal)
}

func (t termWriter) Write(p []byte) (int, error) {
	s := termSafe(string(p), t.colour(), t.redraw)
	if len(s) == len(p) {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// progressRedraw starts a Write of the live progress line (see progress).
const progressRedraw = "\r\x1b[K"

// termSafe is s with its control characters escaped, but for newline, tab,
// with colour pflow's colours, and with redraw a leading progressRedraw.
func termSafe(s string, colour, redraw bool) string {
	i := 0
	if redraw && strings.HasPrefix(s, progressRedraw) {
		i = len(progressRedraw)
	}
	var b strings.Builder
	last := 0 // s[last:i] is not in b yet
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		if c == 0x1b && colour {
			if n := ownColour(s[i:]); n > 0 {
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r >= 0xa0 {
			i += size // not UTF-8 (shown as is), or a printable character
			continue
		}
		b.WriteString(s[last:i])
		q := strconv.QuoteRuneToASCII(r) // '\x1b', '\r', '\u009b'
		b.WriteString(q[1 : len(q)-1])
		i += size
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// ownColour is the length of the colour sequence at the start of s when it
// is one pflow writes (SGR: reset, bold and its reset, red, green, yellow,
// cyan, default colour), else 0.
func ownColour(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	end := strings.IndexByte(s[:min(len(s), 24)], 'm')
	if end < 0 {
		return 0
	}
	for _, p := range strings.Split(s[2:end], ";") {
		switch p {
		case "0", "1", "22", "31", "32", "33", "36", "39":
		default:
			return 0
		}
	}
	return end + 1
}
