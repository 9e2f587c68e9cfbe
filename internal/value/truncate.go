package value

import (
	"strconv"
	"unicode/utf8"
)

// Truncate returns s when it is at most n bytes long; otherwise the longest
// start of s of at most n bytes that ends on a rune boundary, followed by
// mark ("...", "…", "... [truncated]"), which says that s was cut.
func Truncate(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// Preview renders v on one line for a message, cut to about n bytes: a
// string Go-quoted (its text cut, the quotes kept), nil as null, anything
// else as Stringify writes it (containers as JSON). A cut is marked "...".
func Preview(v any, n int) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(Truncate(x, n, "..."))
	case nil:
		return "null"
	}
	return Truncate(Stringify(v), n, "...")
}
