package value

import "unicode/utf8"

// AppendJSONString appends s as a JSON string, byte for byte as MarshalJSON
// writes it (encoding/json without HTML escaping): '"', '\\' and the control
// characters escaped (\n, \r, \t, \b, \f short, the others \u00XX), U+2028
// and U+2029 escaped, and each byte of invalid UTF-8 written as \ufffd.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendJSONEscaped(b, s)
	return append(b, '"')
}

// AppendJSONEscaped appends s escaped as AppendJSONString does, without the
// quotes: for text that goes on inside a string already open.
func AppendJSONEscaped(b []byte, s string) []byte {
	i := 0
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	if i == len(s) { // the common case: nothing to escape
		return append(b, s...)
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

const hexDigits = "0123456789abcdef"

// jsonPlain marks the bytes a JSON string holds as they are: ASCII but for
// the control characters, '"' and '\\'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
