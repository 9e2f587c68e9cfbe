package sink

import (
	"github.com/pflow-go/pflow/internal/template"
)

// URL renders a URL param, resolving its templates against root.
// TODO(issue 9.3): percent-encode each value for the part of the URL it lands in.
func URL(raw string, root map[string]any) (string, []string, error) {
	out, unresolved := template.Resolve(raw, root)
	s, _ := out.(string)
	return s, unresolved, nil
}
