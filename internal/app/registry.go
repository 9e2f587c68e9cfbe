package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

// DescribeNodes resolves node names (types or normalised MCP variants) to
// their specs. Unknown or ambiguous names are reported together, with the
// available types.
func (a *App) DescribeNodes(ctx context.Context, names []string) ([]*node.Spec, error) {
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	var out []*node.Spec
	var unknown, problems []string
	for _, n := range names {
		s, err := LookupNodeType(cat, n)
		if err != nil {
			unknown = append(unknown, n)
			pe := pferr.As(err)
			msg := pe.Message
			if len(pe.Suggestions) > 0 {
				msg += " (" + strings.Join(pe.Suggestions, "; ") + ")"
			}
			problems = append(problems, msg)
			continue
		}
		out = append(out, s)
	}
	if len(unknown) > 0 {
		avail := cat.Types()
		var listed []string
		for _, t := range avail {
			if sp, _ := cat.Lookup(t); sp != nil && (!sp.Hidden || cat.IncludeHidden) {
				listed = append(listed, t)
			}
		}
		more := ""
		if len(listed) > 20 {
			more = fmt.Sprintf(" ... and %d more", len(listed)-20)
			listed = listed[:20]
		}
		return nil, &pferr.Error{Kind: pferr.NotFound,
			Message:     "Unknown nodes: " + strings.Join(unknown, ", "),
			Suggestions: problems,
			Details:     map[string]any{"unknown": unknown},
			Hint:        "Available nodes: " + strings.Join(listed, ", ") + more,
			Fixes:       []pferr.Fix{{Text: "For descriptions, {do}.", Do: pferr.ListNodes()}}}
	}
	return out, nil
}
