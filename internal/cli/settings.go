package cli

import "github.com/spf13/cobra"

// newSettingsCmd is the 'pflow settings' command group.
func newSettingsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "settings commands (not built yet)",
	}
	return cmd
}
