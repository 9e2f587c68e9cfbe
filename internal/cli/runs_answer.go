package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/pferr"
)

// newRunsAnswerCmd is 'pflow runs answer': answer the question of a run
// that waits at an ask step, and continue it.
func newRunsAnswerCmd(f *Factory) *cobra.Command {
	var inputs []string
	var t app.TemporalRequest
	opts := &runOptions{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "answer <run-id|last> <choice>",
		Short: "Answer a waiting run's question (an ask step) and continue the run",
		Long: `A run whose ask step could reach nobody (no terminal, no MCP client that
answers) pauses with status waiting and exits 3; its record keeps the question.
'pflow runs answer' stores the answer in that record and continues the run: a
resume whose ask step takes the answer (channel runs-answer). Finished steps are
re-used, never run again, also after a restart. The continued run prints its
result as the workflow does, and gets its own run id; if it asks again it waits
again.

The choice is one of the question's choices (approve and deny by default);
--input gives the typed input the step's schema asks for, one name=value each.

A run on Temporal (--temporal) waits in its workflow instead of pausing: the
answer is sent to it as a signal and the run goes on on its worker; pflow runs
--temporal lists waiting runs with their question.`,
		Example: `  pflow runs answer 20261124-003250-436399-7bc2 approve
  pflow runs answer last deny
  pflow runs answer last approve --input version=1.2 --input notify=true
  pflow runs answer --temporal 127.0.0.1:7233 pflow-release-1a2b approve   # a run waiting on Temporal`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ios := f.IO
			if asJSON {
				opts.format = "json"
			}
			input := map[string]any{}
			for _, kv := range inputs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return pferr.Newf(pferr.Usage, "--input %q is not name=value", kv)
				}
				input[k] = v
			}
			var pr *progress
			var obs *progress
			if ios.liveProgress() && !asJSON {
				pr = newProgress(ios.ErrOut, ios.ErrStyle())
				defer pr.Close()
				obs = pr
			}
			if t.HostPort != "" {
				// The run waits in its Temporal workflow: the answer is a
				// signal, and the run goes on on its worker.
				if err := needTemporal(f); err != nil {
					return err
				}
				if err := f.App.TemporalAnswer(cmd.Context(), t, args[0], args[1], input); err != nil {
					return err
				}
				fmt.Fprintf(ios.Out, "Answered run %s with %s; it continues on its worker. Follow it with: pflow runs --temporal %s\n", args[0], args[1], t.HostPort)
				return nil
			}
			req := app.AnswerRequest{Run: args[0], Choice: args[1], Input: input}
			req.Origin = "cli"
			if obs != nil {
				req.Observer = obs
			}
			if a := terminalAsker(ios, pr); a != nil {
				req.Asker = a
			}
			out, t, err := f.App.AnswerRun(cmd.Context(), req)
			if err != nil {
				if asJSON {
					return renderJSONError(ios.Out, err)
				}
				return err
			}
			return renderOutcome(ios, opts, t, out, nil)
		},
	}
	addTemporalFlags(cmd.Flags(), &t.HostPort, &t.Namespace, &t.TaskQueue)
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "typed input the question asks for, as name=value (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the continued run's result as JSON (as --output-format json does)")
	cmd.Flags().BoolVarP(&opts.print, "print", "p", false, "print only the result value")
	cmd.Flags().BoolVarP(&opts.verbose, "verbose", "v", false, "show every step and warnings")
	return cmd
}
