package value

import (
	"testing"
	"unicode/utf8"
)

// Truncate cuts at n bytes, never inside a rune, and marks only a cut.
func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		mark string
		want string
	}{
		{"hello", 5, "...", "hello"},
		{"hello", 10, "...", "hello"},
		{"hello world", 5, "...", "hello..."},
		{"hello world", 5, "…", "hello…"},
		{"héllo", 2, "...", "h..."}, // é is two bytes: not cut in half
		{"héllo", 3, "...", "hé..."},
		{"日本語", 4, "", "日"},
		{"abc", 0, "...", "..."},
		{"abc", -1, "...", "..."},
		{"", 0, "...", ""},
	} {
		got := Truncate(c.s, c.n, c.mark)
		if got != c.want {
			t.Errorf("Truncate(%q, %d, %q) = %q, want %q", c.s, c.n, c.mark, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q: not valid UTF-8", c.s, c.n, got)
		}
	}
}

// Preview quotes strings (escaping what would break the line or the quotes,
// cutting inside the quotes), writes nil as null and other values as
// Stringify does.
func TestPreview(t *testing.T) {
	for _, c := range []struct {
		v    any
		n    int
		want string
	}{
		{"bob", 50, `"bob"`},
		{"two\nlines \"quoted\"\ttab", 50, `"two\nlines \"quoted\"\ttab"`},
		{"abcdefghij", 4, `"abcd..."`},
		{"héllo", 2, `"h..."`},
		{int64(42), 50, "42"},
		{2.5, 50, "2.5"},
		{true, 50, "true"},
		{nil, 50, "null"},
		{map[string]any{"a": int64(1), "b": "x"}, 50, `{"a":1,"b":"x"}`},
		{[]any{"a", "b", "c"}, 5, `["a",...`},
	} {
		if got := Preview(c.v, c.n); got != c.want {
			t.Errorf("Preview(%#v, %d) = %s, want %s", c.v, c.n, got, c.want)
		}
	}
}
