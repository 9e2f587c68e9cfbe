// Package value defines pflow's canonical runtime value model and the helpers
// every package uses to convert between it and JSON/YAML.
//
// Every value flowing through a workflow (params, node outputs, inputs, the
// shared store) is one of:
//
//	nil, bool, int64, float64, string, []any, map[string]any
//
// Decoders (JSON, YAML) must call Normalize so that numbers are int64 when
// integral literals and float64 otherwise, and maps are map[string]any.
package value

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Normalize converts a decoded JSON/YAML value tree into the canonical model.
// json.Number becomes int64 when it is an integer literal in range, else float64.
// Other integer kinds become int64, float32 becomes float64, map[any]any and
// map[string]string become map[string]any, []string becomes []any.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, int64, float64, string:
		return x
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return float64(x)
		}
		return int64(x)
	case float32:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = Normalize(e)
		}
		return out
	default:
		// Last resort: round-trip through JSON (structs, typed slices).
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		out, err := DecodeJSON(b)
		if err != nil {
			return fmt.Sprint(x)
		}
		return out
	}
}

// DecodeJSON decodes one JSON document into the canonical model.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after JSON value")
	}
	return Normalize(v), nil
}

// MaxAutoParse is the largest string TryParseJSON will attempt to parse.
const MaxAutoParse = 10 << 20

// TryParseContainer parses s as JSON only when it (after trimming) looks like
// an object or array. Primitive-looking strings are never parsed, so "007" and
// "1458059302022549698" stay strings. ok is false when s is not a container.
func TryParseContainer(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > MaxAutoParse || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	v, err := DecodeJSON([]byte(t))
	if err != nil {
		return nil, false
	}
	switch v.(type) {
	case map[string]any, []any:
		return v, true
	}
	return nil, false
}

// MarshalJSON encodes v as compact JSON without HTML escaping.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Stringify renders a value as text the way templates embed it in a larger
// string: nil → "", strings as-is, numbers in shortest form, bools as
// true/false, containers as compact JSON.
func Stringify(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return FormatFloat(x)
	case []byte:
		return string(x)
	default:
		b, err := MarshalJSON(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// FormatFloat renders a float in its shortest round-tripping form.
func FormatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "Infinity"
	}
	if math.IsInf(f, -1) {
		return "-Infinity"
	}
	if math.IsNaN(f) {
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// TypeName returns the pflow type name of a canonical value: null, bool, int,
// float, str, list, dict.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64, int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// SortedKeys returns the keys of m in sorted order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clone deep-copies a canonical value.
func Clone(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Clone(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Clone(e)
		}
		return out
	default:
		return x
	}
}

// CanonicalType is the one place pflow names its types: "str", "int",
// "float", "bool", "dict", "list" or "any" for the accepted spellings of
// each (string/str, integer/int, number/float, boolean/bool, object/dict,
// array/list, any; any case, surrounding space ignored), "" for "", and an
// unknown name as written (trimmed). A container's item type ("list[dict]")
// and unions ("str|int") are the caller's: they are returned unchanged.
func CanonicalType(t string) string {
	t = strings.TrimSpace(t)
	switch strings.ToLower(t) {
	case "string", "str":
		return "str"
	case "integer", "int":
		return "int"
	case "number", "float":
		return "float"
	case "boolean", "bool":
		return "bool"
	case "object", "dict":
		return "dict"
	case "array", "list":
		return "list"
	case "any":
		return "any"
	}
	return t
}
