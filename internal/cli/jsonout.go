package cli

import (
	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
)

// The --json outputs of the registry and workflow commands, typed. Fields
// are in the order of their JSON names, the order the CLI has always
// printed them in.

// nodeBriefJSON is a node type in `registry list --json`.
type nodeBriefJSON struct {
	Description string `json:"description"`
	Group       string `json:"group"`
	Name        string `json:"name"`
	Type        string `json:"type"`
}

// searchHitJSON is one result of `registry search --json`.
type searchHitJSON struct {
	Description string `json:"description"`
	Match       string `json:"match"`
	Name        string `json:"name"`
	Score       int    `json:"score"`
	Type        string `json:"type"`
}

// nodeSpecJSON is a node type in `registry describe --json` and (with
// confidence and reasons) `registry discover --json`.
type nodeSpecJSON struct {
	Confidence  *float64         `json:"confidence,omitempty"`
	Group       string           `json:"group"`
	Interface   node.Interface   `json:"interface"`
	MCP         *mcpBindingJSON  `json:"mcp,omitempty"`
	Name        string           `json:"name"`
	OutputPaths []outputPathJSON `json:"output_paths,omitempty"`
	Reasons     *[]string        `json:"reasons,omitempty"`
	Type        string           `json:"type"`
	Usage       string           `json:"usage"`
}

type mcpBindingJSON struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

type outputPathJSON struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

func specJSON(s *node.Spec) nodeSpecJSON {
	j := nodeSpecJSON{Name: s.Type, Type: registry.TypeOf(s), Group: registry.GroupOf(s), Interface: s.Interface,
		Usage: registry.UsageSnippet(s)}
	if srv := registry.MCPServerOf(s); srv != "" {
		j.MCP = &mcpBindingJSON{Server: srv, Tool: registry.MCPToolOf(s)}
	}
	for _, p := range registry.OutputPaths(s.Interface.Outputs) {
		j.OutputPaths = append(j.OutputPaths, outputPathJSON{Path: p.Path, Type: p.Type})
	}
	return j
}

// savedJSON is a saved workflow in `workflow list --json` and (with
// confidence, reasons and example, without metadata) `workflow discover
// --json`.
type savedJSON struct {
	Confidence  *float64          `json:"confidence,omitempty"`
	Description string            `json:"description"`
	Example     string            `json:"example,omitempty"`
	Inputs      []app.SavedInput  `json:"inputs"`
	Metadata    *library.Metadata `json:"metadata,omitempty"`
	Name        string            `json:"name"`
	NodeTypes   []string          `json:"node_types"`
	Outputs     []app.SavedOutput `json:"outputs"`
	Path        string            `json:"path"`
	Reasons     *[]string         `json:"reasons,omitempty"`
}

func savedOf(s *library.Saved) savedJSON {
	info := app.SavedInfoOf(s, false)
	meta := s.Meta
	return savedJSON{Name: info.Name, Description: info.Description, Path: info.Path,
		Inputs: info.Inputs, Outputs: info.Outputs, NodeTypes: info.NodeTypes, Metadata: &meta}
}
