// Package trace writes one JSON trace file per run and owns secret
// redaction for everything pflow shows or stores.
package trace

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/settings"
)

// Redacted replaces a secret.
const Redacted = "<REDACTED>"

// Redactor removes secret values from data before it is shown or stored.
type Redactor struct {
	mu      sync.RWMutex
	values  []string
	names   map[string]bool
	replace *strings.Replacer
}

// NewRedactor returns an empty redactor.
func NewRedactor() *Redactor { return &Redactor{names: map[string]bool{}} }

// AddSecret registers a secret value (values shorter than 4 characters are
// ignored: redacting them would mangle ordinary text).
func (r *Redactor) AddSecret(name, v string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" {
		r.names[name] = true
	}
	if len(v) < 4 {
		return
	}
	for _, x := range r.values {
		if x == v {
			return
		}
	}
	r.values = append(r.values, v)
	// Longest first so a secret containing another is replaced whole.
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	pairs := make([]string, 0, 2*len(r.values))
	for _, x := range r.values {
		pairs = append(pairs, x, Redacted)
	}
	r.replace = strings.NewReplacer(pairs...)
}

// SecretNames lists the names of registered secrets.
func (r *Redactor) SecretNames() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.names))
	for k := range r.names {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String removes secret values from s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.replace
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// Value returns a copy of v with secret-looking keys and secret values redacted.
func (r *Redactor) Value(v any) any { return r.value(v, 0) }

// value is Value that also cuts strings longer than maxLen bytes (0: no
// limit) in the same walk, so a trace copies each value once.
func (r *Redactor) value(v any, maxLen int) any {
	switch x := v.(type) {
	case string:
		return truncate(r.String(x), maxLen)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.value(e, maxLen)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if settings.IsSecretKey(k) && e != nil && e != "" {
				if _, isMap := e.(map[string]any); !isMap {
					out[k] = Redacted
					continue
				}
			}
			out[k] = r.value(e, maxLen)
		}
		return out
	default:
		return v
	}
}

// truncate cuts s to at most maxLen bytes (0: no limit) at a rune boundary
// and marks the cut.
func truncate(s string, maxLen int) string {
	if maxLen <= 0 || len(s) <= maxLen {
		return s
	}
	cut := maxLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... [truncated]"
}
