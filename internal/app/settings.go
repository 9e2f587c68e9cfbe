package app

import (
	"context"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
)

// PatternChange is what AddNodePattern / RemoveNodePattern did.
type PatternChange struct {
	// Changed is false when the pattern was already there (add) or absent (remove).
	Changed bool
	// RemovedFromOther is set when adding an allow pattern removed the same
	// pattern from the deny list (or vice versa), so the new rule takes effect.
	RemovedFromOther bool
	Filter           settings.NodeFilter
}

// AddNodePattern adds a glob to the allow (deny=false) or deny list. The
// same pattern on the other list is removed: 'settings allow X' after
// 'settings deny X' means allow.
func (a *App) AddNodePattern(ctx context.Context, pattern string, deny bool) (*PatternChange, error) {
	if err := settings.ValidatePattern(pattern); err != nil {
		return nil, pferr.Newf(pferr.Usage, "%v", err)
	}
	ch := &PatternChange{}
	err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		list, other := &s.Registry.Nodes.Allow, &s.Registry.Nodes.Deny
		if deny {
			list, other = other, list
		}
		if !slices.Contains(*list, pattern) {
			*list = append(*list, pattern)
			ch.Changed = true
		}
		if slices.Contains(*other, pattern) {
			*other = slices.DeleteFunc(*other, func(x string) bool { return x == pattern })
			ch.RemovedFromOther = true
		}
		ch.Filter = s.Registry.Nodes
		return nil
	})
	return ch, err
}

// RemoveNodePattern removes a glob from the allow or deny list.
func (a *App) RemoveNodePattern(ctx context.Context, pattern string, deny bool) (*PatternChange, error) {
	ch := &PatternChange{}
	err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		list := &s.Registry.Nodes.Allow
		if deny {
			list = &s.Registry.Nodes.Deny
		}
		if slices.Contains(*list, pattern) {
			*list = slices.DeleteFunc(*list, func(x string) bool { return x == pattern })
			ch.Changed = true
		}
		ch.Filter = s.Registry.Nodes
		return nil
	})
	return ch, err
}

// UnsetSettingsEnv removes key from settings.json env (exact match, else a
// case-insensitive one). found is false when it was not set.
func (a *App) UnsetSettingsEnv(ctx context.Context, key string) (found bool, err error) {
	err = settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		if _, ok := s.Env[key]; ok {
			delete(s.Env, key)
			found = true
			return nil
		}
		for k := range s.Env {
			if strings.EqualFold(k, key) {
				delete(s.Env, k)
				found = true
			}
		}
		return nil
	})
	return found, err
}

// NodeCheck is the verdict of the allow/deny filter for one node.
type NodeCheck struct {
	Node    string                  `json:"node"`
	Known   bool                    `json:"known"`
	Allowed bool                    `json:"allowed"`
	Reason  string                  `json:"reason"`
	Matches []settings.PatternMatch `json:"matches"`
	// Candidates are the names the patterns were matched against.
	Candidates []string `json:"candidates"`
}

// CheckNode evaluates the allow/deny filter for a node exactly as the
// registry does (same candidate names). An unknown node is evaluated by its
// name alone and reported as unknown.
func (a *App) CheckNode(ctx context.Context, name string) (*NodeCheck, error) {
	specs, st, err := a.AllSpecs(ctx)
	if err != nil {
		return nil, err
	}
	var spec *node.Spec
	cat := registry.NewCatalog(specs)
	if s, _ := cat.Resolve(name); s != nil {
		spec = s
	}
	c := &NodeCheck{Node: name}
	if spec != nil {
		c.Node, c.Known = spec.Type, true
		c.Candidates = NodeCandidates(spec)
	} else {
		// Not installed: evaluate the names it would have, taking the group
		// from the name's first part (git-log → git), so the answer is what
		// the filter would decide if it were.
		group, mcpServer := "", ""
		if rest, ok := strings.CutPrefix(name, "mcp-"); ok {
			mcpServer, _, _ = strings.Cut(rest, "-")
		} else if i := strings.IndexByte(name, '-'); i > 0 {
			group = name[:i]
		} else {
			group = name
		}
		c.Candidates = settings.Candidates(name, group, mcpServer, "")
	}
	c.Allowed, c.Reason, c.Matches = st.Registry.Nodes.Decide(c.Candidates...)
	if c.Matches == nil {
		c.Matches = []settings.PatternMatch{}
	}
	return c, nil
}

// LLM model roles stored in settings.json (llm.*).
const (
	ModelDefault   = "default"   // used by llm steps without a model param
	ModelDiscovery = "discovery" // used by `discover --llm` reranking
)

// SetLLMModel stores (model != "") or clears (model == "") the model for a
// role. It returns the previous value.
func (a *App) SetLLMModel(ctx context.Context, role, model string) (string, error) {
	var prev string
	err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		switch role {
		case ModelDefault:
			prev, s.LLM.DefaultModel = s.LLM.DefaultModel, model
		case ModelDiscovery:
			prev, s.LLM.DiscoveryModel = s.LLM.DiscoveryModel, model
		default:
			return &pferr.Error{Kind: pferr.Usage, Message: "unknown model role '" + role + "'", Hint: "Use 'default' or 'discovery'."}
		}
		return nil
	})
	return prev, err
}
