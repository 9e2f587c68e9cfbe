package cli

import "github.com/spf13/cobra"

// newMCPCmd is the 'pflow mcp' command group.
func newMCPCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP servers whose tools become workflow nodes, or serve pflow over MCP",
	}
	addMCPServeCmd(cmd, f)
	return cmd
}
