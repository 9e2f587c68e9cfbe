package app

import (
	"context"

	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/template"
)

// LabelProvenance marks what an MCP server wrote in a run's report: each
// step of an MCP node type gets its provided_by label (its output and its
// error text are the server's), and the returned map labels each declared
// output whose source reads such a step. Built-in steps stay unlabelled.
// A report without steps, or a catalog that cannot load, is left as is.
func (a *App) LabelProvenance(ctx context.Context, rep *RunReport, t *Target) map[string]*registry.Provenance {
	if rep == nil || rep.Execution == nil || len(rep.Execution.Steps) == 0 {
		return nil
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil
	}
	byStep := map[string]*registry.Provenance{}
	for i := range rep.Execution.Steps {
		st := &rep.Execution.Steps[i]
		if sp, ok := cat.Lookup(st.NodeType); ok {
			if p := registry.ProvidedBy(sp); p != nil {
				st.ProvidedBy = p
				byStep[st.NodeID] = p
			}
		}
	}
	if len(byStep) == 0 || t == nil || t.Workflow == nil || rep.Result == nil {
		return nil
	}
	var out map[string]*registry.Provenance
	for _, o := range t.Workflow.Outputs {
		if o == nil {
			continue
		}
		for _, r := range template.Refs(o.Source) {
			if p := byStep[r.Head]; p != nil {
				if out == nil {
					out = map[string]*registry.Provenance{}
				}
				out[o.Name] = p
				break
			}
		}
	}
	return out
}
