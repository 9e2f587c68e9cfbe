package pferr

// The actions fixes name most often, in one place: each pairs a pflow
// command with the MCP tool of `pflow mcp serve` that does the same.

// DescribeNode shows a node type's params, outputs and an example.
func DescribeNode(nodeType string) *Action {
	return Run("registry describe "+nodeType, "registry_describe", map[string]any{"nodes": []string{nodeType}})
}

// ListNodes lists the node types.
func ListNodes() *Action { return Run("registry list", "registry_list", nil) }

// ListWorkflows lists the saved workflows.
func ListWorkflows() *Action { return Run("workflow list", "workflow_list", nil) }

// Force overwrites what a save would refuse to replace.
func Force() *Action { return Pass("--force", "force", true) }

// SyncServer re-reads an MCP server's tools (only a person can: no tool
// starts servers for an agent).
func SyncServer(server string) *Action { return PersonOnly("mcp sync " + server) }
