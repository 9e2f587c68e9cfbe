package workflow

import (
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// StepDeps returns, for every step of w, the ids of the other steps whose
// outputs it reads: the heads of its references (Node.EachRef: params and
// batch items, not a nested step's own workflow) and of its input mappings
// that are step ids, each once, in the order found.
func (w *Workflow) StepDeps() map[string][]string {
	ids := make(map[string]bool, len(w.Nodes))
	for _, n := range w.Nodes {
		if n != nil {
			ids[n.ID] = true
		}
	}
	out := make(map[string][]string, len(w.Nodes))
	for _, n := range w.Nodes {
		if n == nil {
			continue
		}
		var list []string
		add := func(head string) {
			if head != n.ID && ids[head] && !slices.Contains(list, head) {
				list = append(list, head)
			}
		}
		n.EachRef(func(r template.Ref) { add(r.Head) })
		if m := w.Mappings[n.ID]; m != nil {
			for _, k := range value.SortedKeys(m.InputMappings) {
				p := strings.TrimSuffix(strings.TrimPrefix(m.InputMappings[k], "${"), "}")
				head, _, _ := strings.Cut(p, ".")
				if i := strings.IndexByte(head, '['); i >= 0 {
					head = head[:i]
				}
				add(head)
			}
		}
		out[n.ID] = list
	}
	return out
}

// WaitsFor returns, for every step of w, the steps it waits for when w runs
// in parallel: those it reads (StepDeps), then the other steps its after
// names.
func (w *Workflow) WaitsFor() map[string][]string {
	deps := w.StepDeps()
	for _, n := range w.Nodes {
		if n == nil {
			continue
		}
		v, ok := n.Params[stepkeys.After]
		if !ok {
			continue
		}
		after, _ := stepkeys.ParseAfter(v)
		for _, a := range after {
			if _, known := deps[a]; known && a != n.ID && !slices.Contains(deps[n.ID], a) {
				deps[n.ID] = append(deps[n.ID], a)
			}
		}
	}
	return deps
}
