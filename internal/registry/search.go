package registry

import (
	"github.com/pflow-go/pflow/internal/suggest"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
)

// Match kinds of a search hit, best first.
const (
	MatchExact  = "exact"
	MatchPrefix = "prefix"
	MatchName   = "name"
	MatchDesc   = "desc"
)

// SearchResult is one node found by Search.
type SearchResult struct {
	Spec  *node.Spec
	Score int
	// Match is how the best keyword matched (exact|prefix|name|desc).
	Match string
}

// scoreKeyword is the Python pflow's per-keyword score: exact name 100, name
// prefix 90, name contains 70, description contains 50, else 0.
func scoreKeyword(name, desc, kw string) (int, string) {
	switch {
	case name == kw:
		return 100, MatchExact
	case strings.HasPrefix(name, kw):
		return 90, MatchPrefix
	case strings.Contains(name, kw):
		return 70, MatchName
	case strings.Contains(desc, kw):
		return 50, MatchDesc
	}
	return 0, ""
}

// Search finds the listed nodes matching every keyword (case-insensitive),
// scored by the average of the per-keyword scores, best first, ties by name.
func (c *Catalog) Search(keywords []string) []SearchResult {
	var kws []string
	for _, k := range keywords {
		kws = append(kws, strings.Fields(strings.ToLower(k))...)
	}
	if len(kws) == 0 {
		return nil
	}
	var out []SearchResult
	for _, s := range c.Specs() {
		name := strings.ToLower(s.Type)
		desc := strings.ToLower(s.Interface.Description)
		total, best, bestKind := 0, 0, ""
		ok := true
		for _, kw := range kws {
			sc, kind := scoreKeyword(name, desc, kw)
			if sc == 0 {
				ok = false
				break
			}
			total += sc
			if sc > best {
				best, bestKind = sc, kind
			}
		}
		if !ok {
			continue
		}
		out = append(out, SearchResult{Spec: s, Score: total / len(kws), Match: bestKind})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Spec.Type < out[j].Spec.Type
	})
	return out
}

// Resolve finds a node by its type or a normalised MCP variant
// ("github.create_issue", "mcp-github-create_issue", "github-create-issue").
// It returns the candidates when the name is ambiguous.
func (c *Catalog) Resolve(name string) (*node.Spec, []string) {
	if s, ok := c.Lookup(name); ok {
		return s, nil
	}
	norm := normalizeName(name)
	var hits []string
	for _, t := range c.types {
		s := c.specs[t]
		if normalizeName(t) == norm {
			hits = append(hits, t)
			continue
		}
		if srv := MCPServerOf(s); srv != "" {
			for _, v := range []string{srv + "." + MCPToolOf(s), srv + "-" + MCPToolOf(s), strings.TrimPrefix(t, "mcp-")} {
				if normalizeName(v) == norm {
					hits = append(hits, t)
					break
				}
			}
		}
	}
	if len(hits) == 1 {
		return c.specs[hits[0]], nil
	}
	return nil, hits
}

func normalizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	r := strings.NewReplacer("_", "-", ".", "-", " ", "-")
	s = r.Replace(s)
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return s
}

// Suggest returns up to n node types close to name (did-you-mean).
func (c *Catalog) Suggest(name string, n int) []string {
	visible := make([]string, 0, len(c.types))
	for _, t := range c.types {
		if !c.specs[t].Hidden || c.IncludeHidden {
			visible = append(visible, t)
		}
	}
	return suggest.Near(strings.ToLower(name), visible, n, 1)
}
