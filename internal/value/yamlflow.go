package value

import (
	"fmt"
	"math"
	"strings"
)

// YAMLFlow renders v on one line as YAML flow text that YAML reads back as
// v: JSON (maps in key order), except that a float with a whole value keeps
// a decimal point (2.0: JSON's 2 would come back an int), NaN and the
// infinities, which JSON cannot hold, are strings ("NaN", "Infinity",
// "-Infinity"), and strings are YAMLQuoted. A
// map key is written plain when plainKey reports it may be (nil: every key
// is quoted).
func YAMLFlow(v any, plainKey func(string) bool) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return YAMLQuoted(FormatFloat(x)) // as the run record and traces write them
		}
		s := YAMLQuoted(x)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = YAMLFlow(e, plainKey)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := SortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = yamlFlowKey(k, plainKey) + ": " + YAMLFlow(x[k], plainKey)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]string:
		keys := SortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = yamlFlowKey(k, plainKey) + ": " + YAMLQuoted(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return YAMLQuoted(x)
	}
}

func yamlFlowKey(k string, plainKey func(string) bool) string {
	if plainKey != nil && plainKey(k) {
		return k
	}
	return YAMLQuoted(k)
}

// YAMLQuoted renders v as JSON that YAML reads back as the same value (a
// string as a double-quoted scalar). JSON is a YAML flow value, except that
// YAML refuses some characters JSON leaves raw (DEL, the C1 controls,
// U+FEFF, U+FFFE/U+FFFF) and folds U+0085 (NEL) into a space, so those are
// written as \uXXXX escapes, which both formats read. A value JSON cannot
// hold is written "".
func YAMLQuoted(v any) string {
	b, err := MarshalJSON(v)
	if err != nil {
		return `""`
	}
	s := string(b)
	if strings.IndexFunc(s, yamlUnsafe) < 0 {
		return s
	}
	var out strings.Builder
	for _, r := range s {
		if yamlUnsafe(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

// yamlUnsafe reports whether YAML cannot carry r raw in a double-quoted
// scalar (outside its printable set, or a line break JSON does not escape).
// JSON already escapes the C0 controls, U+2028 and U+2029.
func yamlUnsafe(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff
}
