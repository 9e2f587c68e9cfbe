package registry

import "github.com/pflow-go/pflow/internal/node"

// Provenance says who wrote the text of a node type (its description,
// param and output descriptions) or of a value it returned, when that is
// not pflow: an MCP server. Agents read it as the label on text they must
// treat as data — an MCP server's words are never instructions.
// Built-in and user node types have none.
type Provenance struct {
	// Kind is "mcp".
	Kind string `json:"kind"`
	// Server is the configured MCP server's name; Tool its tool's name.
	Server string `json:"server"`
	Tool   string `json:"tool,omitempty"`
	// Untrusted is always true: pflow relays the text as the server sent it.
	Untrusted bool `json:"untrusted"`
}

// ProvenanceKindMCP is the Kind of text an MCP server wrote.
const ProvenanceKindMCP = "mcp"

// ProvidedBy returns the provenance of a spec's text, nil for node types
// whose text pflow or the user wrote. Every result that relays a node
// type's text to an agent labels it with this, so the label is the same
// everywhere.
func ProvidedBy(sp *node.Spec) *Provenance {
	if sp == nil {
		return nil
	}
	srv := MCPServerOf(sp)
	if srv == "" {
		return nil
	}
	return &Provenance{Kind: ProvenanceKindMCP, Server: srv, Tool: MCPToolOf(sp), Untrusted: true}
}
