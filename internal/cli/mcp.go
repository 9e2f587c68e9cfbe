package cli

import "github.com/spf13/cobra"

// newMCPCmd is the 'pflow mcp' command group.
func newMCPCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "mcp commands (not built yet)",
	}
	return cmd
}
