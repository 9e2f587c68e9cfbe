// Package mcpnode implements the one node type that serves every MCP tool
// registered as "mcp-<server>-<tool>".
package mcpnode

import (
	"context"
	"io"

	"github.com/pflow-go/pflow/internal/node"
)

// Config configures the MCP node.
type Config struct {
	// ServersPath is the path of mcp-servers.json.
	ServersPath string
	// Env looks up variables for ${VAR} expansion (process env, then settings env).
	Env func(string) (string, bool)
	// Log receives warnings (undefined variables, server stderr hints).
	Log io.Writer
}

type mcpNode struct{ cfg Config }

// New returns the node serving every mcp-* type.
func New(cfg Config) node.Node { return &mcpNode{cfg: cfg} }

func (n *mcpNode) Run(ctx context.Context, req *node.Request) (*node.Result, error) {
	return node.Fail("MCP node not implemented yet", nil), nil
}
