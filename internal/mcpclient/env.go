package mcpclient

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/value"
)

// envRef matches ${VAR} and ${VAR:-default}. The default runs to the first
// '}' (as in the Python pflow): ${A:-x}y} gives "xy}", and defaults are never
// expanded again (no recursion).
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// Expander expands ${VAR} references in server configs.
type Expander struct {
	// Lookup finds a variable: process environment, then settings env
	// (case-insensitive). Nil means "nothing is defined".
	Lookup func(string) (string, bool)

	mu      sync.Mutex
	missing map[string]bool
}

// ExpandString expands every reference in s. An undefined variable without a
// default becomes "" and is recorded as missing (see docs/decisions.md,
// "Undefined ${VAR} expands to empty, with a warning").
func (e *Expander) ExpandString(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := envRef.FindStringSubmatch(m)
		name := sub[1]
		hasDefault := strings.Contains(m, ":-") && len(m) > len(name)+3 && m[len(name)+2:len(name)+4] == ":-"
		if e.Lookup != nil {
			if v, ok := e.Lookup(name); ok {
				return v
			}
		}
		if hasDefault {
			return sub[2]
		}
		e.mu.Lock()
		if e.missing == nil {
			e.missing = map[string]bool{}
		}
		e.missing[name] = true
		e.mu.Unlock()
		return ""
	})
}

// Expand expands strings anywhere inside v (map values, list items; never
// map keys). Non-string scalars are returned unchanged. v is not modified.
func (e *Expander) Expand(v any) any {
	switch x := v.(type) {
	case string:
		return e.ExpandString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = e.Expand(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = e.Expand(val)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, val := range x {
			out[i] = e.ExpandString(val)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, val := range x {
			out[k] = e.ExpandString(val)
		}
		return out
	default:
		return v
	}
}

// Missing returns the undefined variables seen so far, sorted.
func (e *Expander) Missing() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return value.SortedKeys(e.missing)
}

// WarnMissing writes one warning per undefined variable to w, naming the
// server and how to set the variable.
func (e *Expander) WarnMissing(w io.Writer, server string) {
	if w == nil {
		return
	}
	for _, name := range e.Missing() {
		fmt.Fprintf(w, "Warning: environment variable %s not found, using empty string (MCP server '%s'). Set it with: pflow settings set-env %s=your_value  or  export %s=your_value\n", name, server, name, name)
	}
}

// LookupChain returns a lookup that tries the process environment (exact
// name) and then the settings env map (case-insensitive name match).
func LookupChain(process func(string) (string, bool), settings map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if process != nil {
			if v, ok := process(name); ok {
				return v, true
			}
		}
		if v, ok := settings[name]; ok {
			return v, true
		}
		for k, v := range settings {
			if strings.EqualFold(k, name) {
				return v, true
			}
		}
		return "", false
	}
}
