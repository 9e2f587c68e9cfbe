package sink

import (
	"fmt"

	"github.com/pflow-go/pflow/internal/template"
)

// CheckCode reports every template in source code: a value pasted into
// source would run as code, so templates are refused and the value must be
// passed through the node's inputs instead.
func CheckCode(src string) []*Problem {
	var out []*Problem
	for _, p := range template.Parts(src) {
		if p.Ref == nil {
			continue
		}
		out = append(out, &Problem{Template: p.Ref.Raw, Offset: p.Ref.Start,
			Message: fmt.Sprintf("template %s is inside the code; a value pasted into source code would run as code", p.Ref.Raw),
			Hint:    fmt.Sprintf("Pass it as an input and use the variable: add '- inputs: {%s: %s}' and write %s in the code.", varName(p.Ref), p.Ref.Raw, varName(p.Ref))})
	}
	return out
}

// varName suggests a variable name for a reference: its last key.
func varName(r *template.Ref) string {
	for i := len(r.Segments) - 1; i >= 0; i-- {
		if s := r.Segments[i]; !s.IsIndex && s.Key != "" {
			return identifier(s.Key)
		}
	}
	return identifier(r.Head)
}

func identifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
