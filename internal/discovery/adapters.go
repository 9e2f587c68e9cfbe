package discovery

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
)

// MaxQueryLen is the longest accepted discovery query.
const MaxQueryLen = 500

// WorkflowDoc builds the searchable document of a saved workflow.
func WorkflowDoc(s *library.Saved) Doc {
	d := Doc{Name: s.Name}
	d.Fields = append(d.Fields, Field{Label: "name", Text: s.Name, Weight: 3})
	if s.Description != "" {
		d.Fields = append(d.Fields, Field{Label: "description", Text: s.Description, Weight: 2})
	}
	w := s.Workflow
	if w == nil {
		return d
	}
	if w.Source != nil && w.Source.Title != "" {
		d.Fields = append(d.Fields, Field{Label: "title", Text: w.Source.Title, Weight: 2})
	}
	for _, in := range w.Inputs {
		d.Fields = append(d.Fields, Field{Label: "input '" + in.Name + "'", Text: in.Name + " " + in.Description, Weight: 1})
	}
	for _, o := range w.Outputs {
		d.Fields = append(d.Fields, Field{Label: "output '" + o.Name + "'", Text: o.Name + " " + o.Description, Weight: 1})
	}
	var types []string
	seen := map[string]bool{}
	var purposes []string
	for _, n := range w.Nodes {
		if !seen[n.Type] {
			seen[n.Type] = true
			types = append(types, n.Type)
		}
		if n.Purpose != "" {
			purposes = append(purposes, n.ID+" "+n.Purpose)
		} else {
			purposes = append(purposes, n.ID)
		}
	}
	sort.Strings(types)
	for _, t := range types {
		label := "node type '" + t + "'"
		text := t
		if srv := mcpServerOfType(t); srv != "" {
			label = "MCP server '" + srv + "'"
		}
		d.Fields = append(d.Fields, Field{Label: label, Text: text, Weight: 1.5})
	}
	if len(purposes) > 0 {
		d.Fields = append(d.Fields, Field{Label: "steps", Text: strings.Join(purposes, "\n"), Weight: 0.8})
	}
	return d
}

// mcpServerOfType guesses the server of "mcp-<server>-<tool>" (the first part).
func mcpServerOfType(t string) string {
	rest, ok := strings.CutPrefix(t, "mcp-")
	if !ok {
		return ""
	}
	srv, _, _ := strings.Cut(rest, "-")
	return srv
}

// RankWorkflows ranks saved workflows for a task description.
func RankWorkflows(query string, ws []*library.Saved, limit int) []Match {
	docs := make([]Doc, len(ws))
	for i, s := range ws {
		docs[i] = WorkflowDoc(s)
	}
	return Rank(query, docs, limit)
}

// NodeDoc builds the searchable document of a node type.
func NodeDoc(s *node.Spec) Doc {
	d := Doc{Name: s.Type}
	d.Fields = append(d.Fields, Field{Label: "name", Text: s.Type, Weight: 3})
	if s.Interface.Description != "" {
		d.Fields = append(d.Fields, Field{Label: "description", Text: s.Interface.Description, Weight: 2})
	}
	if srv := registry.MCPServerOf(s); srv != "" {
		d.Fields = append(d.Fields, Field{Label: "MCP server '" + srv + "'", Text: srv + " " + registry.MCPToolOf(s), Weight: 2})
	} else if s.Group != "" {
		d.Fields = append(d.Fields, Field{Label: "group '" + s.Group + "'", Text: s.Group, Weight: 1.5})
	}
	for _, p := range s.Interface.Params {
		d.Fields = append(d.Fields, Field{Label: "param '" + p.Key + "'", Text: p.Key + " " + p.Description, Weight: 0.8})
	}
	for _, o := range s.Interface.Outputs {
		d.Fields = append(d.Fields, Field{Label: "output '" + o.Key + "'", Text: o.Key + " " + o.Description, Weight: 0.8})
	}
	return d
}

// RankNodes ranks node types for a task description.
func RankNodes(query string, specs []*node.Spec, limit int) []Match {
	docs := make([]Doc, len(specs))
	for i, s := range specs {
		docs[i] = NodeDoc(s)
	}
	return Rank(query, docs, limit)
}

// CheckQueryLen is the one input-size rule of both discovery calls
// (workflows and node types): at most MaxQueryLen characters, counted as
// characters, not bytes ("é" is one).
func CheckQueryLen(q string) error {
	if n := utf8.RuneCountInString(q); n > MaxQueryLen {
		return pferr.Newf(pferr.Usage, "Query too long (max %d characters, got %d)", MaxQueryLen, n).
			WithHint("Describe the task in a sentence or two.")
	}
	return nil
}
