package cli

import "github.com/spf13/cobra"

// addMCPServeCmd adds 'pflow mcp serve' to the mcp group.
func addMCPServeCmd(mcpCmd *cobra.Command, f *Factory) {}
