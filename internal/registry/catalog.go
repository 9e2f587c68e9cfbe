package registry

import (
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

// Extra keys set on specs built from registry entries.
const (
	ExtraRegistryType = "registry_type" // "core" | "mcp" | "user"
	ExtraMCPServer    = "mcp_server"
	ExtraMCPTool      = "mcp_tool"
	// ExtraMCPHints holds an MCP tool's *MCPHints (absent when it declares none).
	ExtraMCPHints = "mcp_hints"
)

// Catalog is the set of usable node types. It implements node.Catalog.
// Denied nodes (settings allow/deny) are not in it, but DeniedReason explains
// why a type is missing.
type Catalog struct {
	specs  map[string]*node.Spec
	types  []string // sorted
	denied map[string]string
	// IncludeHidden lists hidden (test) nodes too.
	IncludeHidden bool
}

// NewCatalog builds a catalog from specs. A later spec with the same type
// replaces an earlier one.
func NewCatalog(specs []*node.Spec) *Catalog {
	c := &Catalog{specs: make(map[string]*node.Spec, len(specs)), denied: map[string]string{}}
	for _, s := range specs {
		if s == nil || s.Type == "" {
			continue
		}
		if _, dup := c.specs[s.Type]; !dup {
			c.types = append(c.types, s.Type)
		}
		c.specs[s.Type] = s
	}
	sort.Strings(c.types)
	return c
}

// Lookup returns the spec for a node type.
func (c *Catalog) Lookup(nodeType string) (*node.Spec, bool) {
	s, ok := c.specs[nodeType]
	return s, ok
}

// Types lists every usable node type, sorted (hidden ones included: they are usable).
func (c *Catalog) Types() []string { return c.types }

// Len is the number of usable node types.
func (c *Catalog) Len() int { return len(c.types) }

// Specs returns the listed specs sorted by type: hidden ones only when
// IncludeHidden is set.
func (c *Catalog) Specs() []*node.Spec {
	out := make([]*node.Spec, 0, len(c.types))
	for _, t := range c.types {
		s := c.specs[t]
		if s.Hidden && !c.IncludeHidden {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Replace puts s in place of the spec of its type (specs may be shared
// between catalogs: a catalog that needs a spec changed replaces it with a
// changed copy). A type the catalog lacks is not added.
func (c *Catalog) Replace(s *node.Spec) {
	if _, ok := c.specs[s.Type]; ok {
		c.specs[s.Type] = s
	}
}

// Deny removes a node type from the catalog, remembering why.
func (c *Catalog) Deny(nodeType, reason string) {
	if _, ok := c.specs[nodeType]; !ok {
		return
	}
	delete(c.specs, nodeType)
	i := sort.SearchStrings(c.types, nodeType)
	if i < len(c.types) && c.types[i] == nodeType {
		c.types = append(c.types[:i], c.types[i+1:]...)
	}
	c.denied[nodeType] = reason
}

// DeniedReason says why a known node type was filtered out by settings.
func (c *Catalog) DeniedReason(nodeType string) (string, bool) {
	r, ok := c.denied[nodeType]
	return r, ok
}

// Denied lists the filtered-out node types, sorted.
func (c *Catalog) Denied() []string {
	return value.SortedKeys(c.denied)
}

// TypeOf returns a spec's registry type: "core", "mcp" or "user".
func TypeOf(s *node.Spec) string {
	if t, ok := s.Extra[ExtraRegistryType].(string); ok && t != "" {
		return t
	}
	if _, ok := s.Extra[ExtraMCPServer]; ok {
		return TypeMCP
	}
	return TypeCore
}

// MCPServerOf returns the MCP server of an MCP spec ("" otherwise).
func MCPServerOf(s *node.Spec) string {
	v, _ := s.Extra[ExtraMCPServer].(string)
	return v
}

// MCPToolOf returns the original MCP tool name of an MCP spec ("" otherwise).
func MCPToolOf(s *node.Spec) string {
	v, _ := s.Extra[ExtraMCPTool].(string)
	return v
}

// MCPHintsOf returns the annotations an MCP spec's tool declared (nil when none).
func MCPHintsOf(s *node.Spec) *MCPHints {
	h, _ := s.Extra[ExtraMCPHints].(*MCPHints)
	return h
}

// GroupOf returns the package a spec is listed under.
func GroupOf(s *node.Spec) string {
	if s.Group != "" {
		return s.Group
	}
	if srv := MCPServerOf(s); srv != "" {
		return srv
	}
	if i := strings.IndexByte(s.Type, '-'); i > 0 {
		return s.Type[:i]
	}
	return s.Type
}

// EntryFromSpec converts a built-in spec to its registry.json entry.
func EntryFromSpec(s *node.Spec) *Entry {
	return &Entry{
		ClassName: className(s.Type),
		Type:      TypeOf(s),
		Group:     s.Group,
		Interface: s.Interface,
	}
}

// className mirrors the Python pflow's naming: "read-file" → "ReadFileNode".
func className(t string) string {
	var b strings.Builder
	for _, p := range strings.Split(t, "-") {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	b.WriteString("Node")
	return b.String()
}

// SpecFromEntry turns a registry.json entry into a spec served by impl.
func SpecFromEntry(nodeType string, e *Entry, impl node.Node) *node.Spec {
	extra := map[string]any{ExtraRegistryType: e.Type}
	group := e.Group
	attempts := 0
	if e.MCP != nil {
		extra[ExtraMCPServer] = e.MCP.Server
		extra[ExtraMCPTool] = e.MCP.Tool
		if e.MCP.Hints != nil {
			extra[ExtraMCPHints] = e.MCP.Hints
		}
		if group == "" {
			group = e.MCP.Server
		}
		attempts = 1 // MCP calls may have side effects: retried only on request
	}
	s := &node.Spec{
		Type:      nodeType,
		Group:     group,
		Interface: e.Interface,
		Attempts:  attempts,
		Node:      impl,
		Extra:     extra,
	}
	if e.MCP != nil {
		s.MainOutput = "result"
		s.StdinParam = mcpStdinParam(e.Interface.Params)
	}
	return s
}

// mcpStdinParam is the param piped data fills for an MCP tool: its only
// required string param ("" when it has none or several).
func mcpStdinParam(params []node.Field) string {
	found := ""
	for _, p := range params {
		if !p.Required || value.CanonicalType(p.Type) != "str" {
			continue
		}
		if found != "" {
			return ""
		}
		found = p.Key
	}
	return found
}

// Grouped is a listing split the way 'pflow registry list' shows it.
type Grouped struct {
	// Core maps a package (group) to its nodes, sorted by type.
	Core map[string][]*node.Spec
	// MCP maps a server name to its tools, sorted by type.
	MCP  map[string][]*node.Spec
	User []*node.Spec
}

// Group splits the listed specs into core packages, MCP servers and user nodes.
func (c *Catalog) Group() *Grouped { return c.GroupFiltered("") }

// GroupFiltered is Group of the specs that match filter: every word of it
// appears, in any case, in the node type, its package or server, or its
// description ("" matches all).
func (c *Catalog) GroupFiltered(filter string) *Grouped {
	words := strings.Fields(strings.ToLower(filter))
	g := &Grouped{Core: map[string][]*node.Spec{}, MCP: map[string][]*node.Spec{}}
	for _, s := range c.Specs() {
		if len(words) > 0 {
			hay := strings.ToLower(s.Type + " " + GroupOf(s) + " " + s.Interface.Description)
			match := true
			for _, w := range words {
				match = match && strings.Contains(hay, w)
			}
			if !match {
				continue
			}
		}
		switch TypeOf(s) {
		case TypeMCP:
			srv := MCPServerOf(s)
			g.MCP[srv] = append(g.MCP[srv], s)
		case TypeUser:
			g.User = append(g.User, s)
		default:
			grp := GroupOf(s)
			g.Core[grp] = append(g.Core[grp], s)
		}
	}
	return g
}
