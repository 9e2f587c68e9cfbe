package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/instructions"
)

// newInstructionsCmd is 'pflow instructions': the agent guide, the same
// text the MCP server serves as pflow://instructions (and, with --sandbox,
// pflow://instructions/sandbox).
func newInstructionsCmd(f *Factory) *cobra.Command {
	var sandbox bool
	cmd := &cobra.Command{
		Use:   "instructions [--sandbox]",
		Short: "Print the guide for AI agents building pflow workflows",
		Long: `Prints the agent guide: how to discover nodes, write a .pflow.md workflow,
validate, run and save it. It is the same text the MCP server serves as the
resource pflow://instructions. With --sandbox, prints the variant for agents
that have no shell or shared filesystem (pflow://instructions/sandbox).

Point an agent at it with: pflow instructions`,
		Example: `  pflow instructions
  pflow instructions --sandbox > AGENT_GUIDE.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text := instructions.Agent()
			if sandbox {
				text = instructions.Sandbox()
			}
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			_, err := io.WriteString(f.IO.Out, text)
			return err
		},
	}
	cmd.Flags().BoolVar(&sandbox, "sandbox", false, "print the guide for agents without a shell or filesystem")
	return cmd
}
