package runs

import (
	"encoding/json"
	"strings"
	"testing"
)

// appendString writes JSON strings that decode to the string written,
// invalid UTF-8 becoming U+FFFD.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain ascii", `quote " and \ backslash`, "tab\tnew\nline\rcr", "\x00\x01\x1f\x7f",
		"héllo wörld ✓ 𝄞", "bad \xff\xfe utf8", "<html> & 'x'", "\u2028\u2029", strings.Repeat("long ", 100)} {
		b := appendString([]byte("x"), s)
		var got string
		if err := json.Unmarshal(b[1:], &got); err != nil {
			t.Fatalf("%q: %s does not decode: %v", s, b[1:], err)
		}
		if want := string([]rune(s)); got != want { // each invalid byte is one U+FFFD
			t.Errorf("%q: decodes to %q", s, got)
		}
	}
}
