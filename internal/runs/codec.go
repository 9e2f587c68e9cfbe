package runs

import (
	"math"
	"strconv"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
)

// encoder appends canonical values as JSON that decodes (value.DecodeJSON)
// to the same values: a float64 with an integral value is written 2.0, so it
// comes back a float, not an int64. Secret values and the values of
// secret-looking keys are replaced as the trace redactor does, and the
// encoder reports whether it replaced anything: an output that held a secret
// is stored redacted, so it cannot be re-used.
//
// One encoder is used by one goroutine at a time.
type encoder struct {
	red *redact.Redactor
	// mask is red's secrets, taken again for every event (see Run.appendEvent)
	mask    redact.Masker
	changed bool
}

func newEncoder(red *redact.Redactor) *encoder {
	return &encoder{red: red, mask: red.Masker()}
}

// value appends v. It follows redact.Redactor.Value: a secret-looking key's
// non-empty, non-map value becomes the redaction marker; every string has
// the known secret values replaced.
func (e *encoder) value(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendFloat(b, x)
	case string:
		if r := e.mask.String(x); r != x {
			e.changed = true
			x = r
		}
		return value.AppendJSONString(b, x)
	case []any:
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.value(b, el)
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		first := true
		for k, el := range x {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = value.AppendJSONString(b, k)
			b = append(b, ':')
			if el != nil && el != "" && redact.IsSecretKey(k) {
				if _, isMap := el.(map[string]any); !isMap {
					e.changed = true
					b = value.AppendJSONString(b, redact.Redacted)
					continue
				}
			}
			b = e.value(b, el)
		}
		return append(b, '}')
	default:
		return e.value(b, value.Normalize(x))
	}
}

// appendFloat writes f so that it decodes as a float again. NaN and the
// infinities, which JSON cannot hold, become strings.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0):
		return value.AppendJSONString(b, value.FormatFloat(f))
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return b
		}
	}
	return append(b, ".0"...)
}

// bounded returns v with strings longer than max bytes cut (at a rune
// boundary, marked), as traces bound their values.
// TODO: use the trace package's bounding helper once it has one.
func bounded(v any, max int) any {
	switch x := v.(type) {
	case string:
		return value.Truncate(x, max, "... [truncated]")
	case []any:
		n := len(x)
		if n > boundedItems {
			n = boundedItems
		}
		out := make([]any, 0, n+1)
		for _, el := range x[:n] {
			out = append(out, bounded(el, max))
		}
		if len(x) > n {
			out = append(out, "... ["+strconv.Itoa(len(x)-n)+" more items]")
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, el := range x {
			out[k] = bounded(el, max)
		}
		return out
	default:
		return v
	}
}

// boundedItems bounds the list items bounded keeps.
const boundedItems = 100
