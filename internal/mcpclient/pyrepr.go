package mcpclient

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/value"
)

// parsePythonRepr converts the repr of a Python dict or list (single-quoted
// strings, True/False/None, tuples) into a canonical value. Some servers
// return str(dict) instead of JSON (as in the Python pflow); anything that is not a
// plain literal is refused (ok false), nothing is ever evaluated.
func parsePythonRepr(s string) (any, bool) {
	p := &pyParser{s: s}
	p.skip()
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.skip()
	if p.i != len(p.s) {
		return nil, false
	}
	switch v.(type) {
	case map[string]any, []any:
		return v, true
	}
	return nil, false
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *pyParser) value(depth int) (any, bool) {
	if depth > 100 || p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '[' || c == '(':
		return p.list(depth, map[byte]byte{'[': ']', '(': ')'}[c])
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for word, v := range map[string]any{"True": true, "False": false, "None": nil} {
		if strings.HasPrefix(p.s[p.i:], word) {
			p.i += len(word)
			return v, true
		}
	}
	return nil, false
}

func (p *pyParser) dict(depth int) (any, bool) {
	p.i++ // {
	out := map[string]any{}
	for {
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, true
		}
		k, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.skip()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out[value.Stringify(k)] = v
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, true
		}
		return nil, false
	}
}

func (p *pyParser) list(depth int, end byte) (any, bool) {
	p.i++
	out := []any{}
	for {
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, true
		}
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, true
		}
		return nil, false
	}
}

func (p *pyParser) str() (any, bool) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), true
		case c == '\\' && p.i+1 < len(p.s):
			n := p.s[p.i+1]
			switch n {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(n)
			case 'x', 'u', 'U':
				size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
				if p.i+2+size > len(p.s) {
					return nil, false
				}
				r, err := strconv.ParseUint(p.s[p.i+2:p.i+2+size], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return nil, false
				}
				b.WriteRune(rune(r))
				p.i += size
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return nil, false
}

func (p *pyParser) number() (any, bool) {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	for p.i < len(p.s) && strings.ContainsRune("0123456789.eE+-_", rune(p.s[p.i])) {
		p.i++
	}
	lit := strings.ReplaceAll(p.s[start:p.i], "_", "")
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(lit, 64); err == nil {
		return f, true
	}
	return nil, false
}
