package value

import (
	"strings"
	"testing"
)

// AppendJSONString writes every string byte for byte as MarshalJSON does
// (the run record's events and its JSON files, and traces, spell a string
// one way): the short escapes \b and \f, U+2028 and U+2029 escaped, each
// invalid byte a \ufffd.
func TestAppendJSONStringIsMarshalJSON(t *testing.T) {
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{"", "plain ascii", `quote " and \ backslash`, "tab\tnew\nline\rcr", "\b\f\x00\x01\x1f\x7f",
		"héllo wörld ✓ 𝄞", "bad \xff\xfe utf8", "cut \xe2\x9c", "<html> & 'x'", "\u2028\u2029", "a\u2028b\u2029c",
		"\u0085 NEL \ufeff BOM", strings.Repeat("long ", 100), all.String()} {
		want, err := MarshalJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want %s", s, got[1:], want)
		}
		if got := AppendJSONEscaped(nil, s); string(got) != string(want[1:len(want)-1]) {
			t.Errorf("%q: escaped %s, want %s", s, got, want[1:len(want)-1])
		}
	}
}
