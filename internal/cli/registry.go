package cli

import "github.com/spf13/cobra"

// newRegistryCmd is the 'pflow registry' command group.
func newRegistryCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "registry commands (not built yet)",
	}
	return cmd
}
