package cli

import (
	"github.com/spf13/cobra"
)

// newRunCmd is the root command: pflow [flags] <workflow> [key=value...].
func newRunCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pflow [flags] <workflow.pflow.md|saved-name> [key=value...]",
		Short: "Run deterministic workflows of shell, HTTP, file, LLM, code and MCP steps",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return nil // TODO(lead): run pipeline
		},
	}
	cmd.Flags().SetInterspersed(false)
	return cmd
}
