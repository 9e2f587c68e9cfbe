package cli

import "github.com/spf13/cobra"

// newWorkflowCmd is the 'pflow workflow' command group.
func newWorkflowCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "workflow commands (not built yet)",
	}
	return cmd
}
