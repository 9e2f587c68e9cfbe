package sink

import (
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// AllowParentPathsParam is the step param that lets template values in a
// file path climb out of the folder the path names (a ".." segment).
const AllowParentPathsParam = "allow_parent_paths"

// Path renders a file path param: each template's value is pasted as text,
// but a path segment ".." that holds any byte of a value is refused, so a
// value cannot leave the folder the workflow's author wrote
// ("out/${name}" with name "../../.ssh/x"). A ".." the author wrote stays.
// Templates whose path does not resolve are returned in order, deduplicated;
// their own text stands in for the value and is not checked.
func Path(raw string, root map[string]any) (string, []string, error) {
	parts := template.Parts(raw)
	var unresolved []string
	type span struct {
		ref        *template.Ref
		start, end int
	}
	var spans []span
	var b strings.Builder
	for _, p := range parts {
		if p.Ref == nil {
			b.WriteString(p.Text)
			continue
		}
		v, found := template.Value(root, *p.Ref)
		if !found {
			if !containsStr(unresolved, p.Ref.Raw) {
				unresolved = append(unresolved, p.Ref.Raw)
			}
			b.WriteString(p.Ref.Raw)
			continue
		}
		start := b.Len()
		b.WriteString(value.Stringify(v))
		spans = append(spans, span{p.Ref, start, b.Len()})
	}
	out := b.String()
	if len(spans) == 0 {
		return out, unresolved, nil
	}
	start := 0
	for start <= len(out) {
		end := strings.IndexByte(out[start:], '/')
		if end < 0 {
			end = len(out)
		} else {
			end += start
		}
		if out[start:end] == ".." {
			for _, s := range spans {
				if s.start < end && s.end > start { // the value reaches into the segment
					return "", nil, &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
						Message: fmt.Sprintf("the value of %s makes the path segment \"..\" (path %q), which leaves the folder the path names", s.ref.Raw, out),
						Hint: fmt.Sprintf("A value in a file path must stay inside the folder written around it. Check where the value comes from; "+
							"if it is yours and may point elsewhere, add '- %s: true' to the step.", AllowParentPathsParam)}
				}
			}
		}
		start = end + 1
	}
	return out, unresolved, nil
}
