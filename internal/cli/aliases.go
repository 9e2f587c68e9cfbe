package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Other spellings of commands that people (and older pflow guides) use. Each
// is hidden from help and the docs and runs the command it names, saying so
// on stderr, except 'pflow serve mcp', whose stdout and stderr belong to the
// MCP client.

// newServeAliasCmd is 'pflow serve mcp', the same command as 'pflow mcp serve'.
func newServeAliasCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Serve pflow over a protocol: 'pflow serve mcp' is 'pflow mcp serve'",
		Hidden: true,
	}
	mcp := newMCPServeCmd(f)
	mcp.Use = "mcp"
	mcp.Short = "Same as 'pflow mcp serve'"
	cmd.AddCommand(mcp)
	return cmd
}

// aliasOf makes c, built by another command's constructor, the hidden
// spelling use of the command canonical: it runs it and notes the canonical
// spelling on stderr first.
func aliasOf(f *Factory, c *cobra.Command, use, canonical string) *cobra.Command {
	c.Use = use
	c.Hidden = true
	c.Short = "Same as '" + canonical + "'"
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		fmt.Fprintf(f.IO.ErrOut, "Note: '%s' is '%s'; running that.\n", cmd.CommandPath(), canonical)
		return run(cmd, args)
	}
	return c
}

// newRegistryAliasCmds are 'pflow registry add-mcp' (pflow mcp add) and
// 'pflow registry refresh' (pflow mcp sync --all: every server's tools).
func newRegistryAliasCmds(f *Factory) []*cobra.Command {
	add := aliasOf(f, newMCPAddCmd(f), "add-mcp <config-file|json>...", "pflow mcp add")
	refresh := aliasOf(f, newMCPSyncCmd(f), "refresh [name...]", "pflow mcp sync --all")
	run := refresh.RunE
	refresh.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 && !cmd.Flags().Changed("all") {
			if err := cmd.Flags().Set("all", "true"); err != nil {
				return err
			}
		}
		return run(cmd, args)
	}
	return []*cobra.Command{add, refresh}
}
