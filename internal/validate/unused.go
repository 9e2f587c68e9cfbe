package validate

import (
	"fmt"
	"strings"
)

// ---------------------------------------------------------------- unused inputs

func (v *validator) unusedInputs() {
	var names []string
	line := 0
	for _, in := range v.w.Inputs {
		if in == nil || v.usedInputs[in.Name] {
			continue
		}
		if len(names) == 0 {
			line = in.Line
		}
		names = append(names, in.Name)
	}
	if len(names) == 0 {
		return
	}
	v.add(layerTemplates, Diagnostic{
		Message: "Declared input(s) never used as template variable: " + strings.Join(names, ", "),
		Line:    line,
		Hint:    fmt.Sprintf("Use each input in a step (e.g. ${%s}) or remove its declaration under '## Inputs'.", names[0]),
	})
}
