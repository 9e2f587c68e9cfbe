package app

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// ParseParams splits key=value arguments. Values stay raw strings: the
// declared type of the input they fill decides how they are read (so "007"
// stays "007" for a string input). Use InferType for undeclared params.
func ParseParams(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	var bad []string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, &pferr.Error{Kind: pferr.Usage,
				Message: fmt.Sprintf("argument %q is not a key=value parameter", a),
				Hint:    "Pass workflow inputs as key=value, e.g. pflow my-workflow name=World. Flags go before the workflow."}
		}
		if !ValidParamName(k) {
			bad = append(bad, k)
			continue
		}
		out[k] = v
	}
	if len(bad) > 0 {
		return nil, &pferr.Error{Kind: pferr.Usage,
			Message: "invalid parameter name(s): " + strings.Join(bad, ", "),
			Hint:    "Parameter names must be non-empty and free of spaces, quotes, backslashes and shell metacharacters ($ | > < & ; `)."}
	}
	return out, nil
}

// ValidParamName reports whether k can name an input or CLI parameter.
func ValidParamName(k string) bool {
	if k == "" {
		return false
	}
	return !strings.ContainsAny(k, "$|><&;`\n\r\x00\"'\\ \t")
}

// InferType reads a CLI value whose target type is unknown: true/false →
// bool, integers → int, decimals → float, JSON arrays/objects → containers,
// anything else (including "007" and numbers too large to keep) → string.
func InferType(s string) any {
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	}
	if isPlainInt(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		return s // too large: keep every digit
	}
	if isPlainFloat(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
	}
	if v, ok := value.TryParseContainer(s); ok {
		return v
	}
	return s
}

// isPlainInt accepts -12, 12, 0 but not 007, +5 or 1_000 (those stay text).
func isPlainInt(s string) bool {
	t := strings.TrimPrefix(s, "-")
	if t == "" || (len(t) > 1 && t[0] == '0') {
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPlainFloat accepts 1.5, -0.25, 1e5 but not nan, inf or .5.
func isPlainFloat(s string) bool {
	t := strings.TrimPrefix(s, "-")
	if t == "" || t[0] < '0' || t[0] > '9' {
		return false
	}
	if len(t) > 1 && t[0] == '0' && t[1] != '.' && t[1] != 'e' && t[1] != 'E' {
		return false
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}
