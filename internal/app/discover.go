package app

import (
	"context"
	"strings"

	"github.com/pflow-go/pflow/internal/discovery"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

// Confidence thresholds of workflow discovery, the Python pflow's.
const (
	ReuseConfidence    = 0.95
	DescribeConfidence = 0.70
)

// WorkflowMatch is one discovered saved workflow.
type WorkflowMatch struct {
	Info       *SavedInfo
	Confidence float64
	Reasons    []string
}

// WorkflowDiscovery is the result of DiscoverSavedWorkflows.
type WorkflowDiscovery struct {
	Matches []WorkflowMatch
	// Total is how many saved workflows were searched.
	Total int
	// Recommendation is "execute" (best match >= ReuseConfidence),
	// "describe" (>= DescribeConfidence) or "build".
	Recommendation string
}

// DiscoverSavedWorkflows ranks the saved workflows against a task
// description with the local relevance model (see docs/decisions.md, "Discovery
// without an LLM"): offline, instant,
// deterministic. It uses RankSavedWorkflows (and its discovery index), then
// loads only the matches to describe them.
func (a *App) DiscoverSavedWorkflows(query string, limit int) (*WorkflowDiscovery, error) {
	ms, total, err := a.RankSavedWorkflows(query, limit)
	if err != nil {
		return nil, err
	}
	res := &WorkflowDiscovery{Total: total, Recommendation: "build"}
	lib := a.Library()
	for _, m := range ms {
		s, err := lib.Load(m.Name)
		if err != nil {
			continue
		}
		res.Matches = append(res.Matches, WorkflowMatch{Info: SavedInfoOf(s, false), Confidence: m.Confidence, Reasons: m.Reasons})
	}
	if len(res.Matches) > 0 {
		switch c := res.Matches[0].Confidence; {
		case c >= ReuseConfidence:
			res.Recommendation = "execute"
		case c >= DescribeConfidence:
			res.Recommendation = "describe"
		}
	}
	return res, nil
}

// NodeMatch is one discovered node type.
type NodeMatch struct {
	Spec       *node.Spec
	Confidence float64
	Reasons    []string
}

// DiscoverNodeTypes ranks the usable (listed, allowed) node types against a
// task description with the local relevance model (see docs/decisions.md,
// "Discovery without an LLM"); with useLLM the
// configured model reranks the top matches (the local order is kept, with a
// warning, when no model is configured or the call fails).
func (a *App) DiscoverNodeTypes(ctx context.Context, task string, limit int, useLLM bool) ([]NodeMatch, error) {
	if strings.TrimSpace(task) == "" {
		return nil, pferr.New(pferr.Usage, "the task is empty").WithHint("Describe what the workflow must do, e.g. 'fetch a URL and summarize it'.")
	}
	if err := discovery.CheckQueryLen(task); err != nil {
		return nil, err
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ms := discovery.RankNodes(task, cat.Specs(), limit)
	if useLLM {
		ms = a.RerankNodes(ctx, task, ms, func(n string) string {
			if s, ok := cat.Lookup(n); ok {
				return s.Interface.Description
			}
			return ""
		})
	}
	var out []NodeMatch
	for _, m := range ms {
		if s, ok := cat.Lookup(m.Name); ok {
			out = append(out, NodeMatch{Spec: s, Confidence: m.Confidence, Reasons: m.Reasons})
		}
	}
	return out, nil
}
