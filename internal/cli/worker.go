package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/pferr"
)

// addTemporalFlags registers where a run or a worker finds Temporal.
func addTemporalFlags(fl *pflag.FlagSet, hostPort, namespace, queue *string) {
	fl.StringVar(hostPort, "temporal", "", "run on the Temporal service at host:port (see docs/scale-out.md)")
	fl.StringVar(namespace, "namespace", "", "with --temporal: the Temporal namespace (default \"default\")")
	fl.StringVar(queue, "task-queue", "", "with --temporal: the task queue pflow workers poll (default \"pflow\")")
}

// newWorkerCmd is `pflow worker`: run workflows submitted to Temporal.
func newWorkerCmd(f *Factory) *cobra.Command {
	var t app.TemporalRequest
	var maxConcurrent int
	cmd := &cobra.Command{
		Use:   "worker --temporal <host:port> [--namespace N] [--task-queue Q]",
		Short: "Run workflows submitted to Temporal (pflow --temporal) on this machine",
		Long: `Starts a Temporal worker: it polls the task queue and runs the steps of pflow
workflows submitted with 'pflow --temporal'. Start as many as you like, on as
many machines: each step runs on whichever worker takes it, a worker that dies
hands its steps to the others, and the run survives a restart of any of them.

Every worker and submitter must share the payload key (PFLOW_TEMPORAL_KEY, or
$PFLOW_HOME/temporal.key): nothing reaches Temporal's history unsealed.
Secrets (settings env, API keys) are read on the worker, from its own
environment and settings. Stop the worker with Ctrl-C.

Examples:
  pflow worker --temporal 127.0.0.1:7233
  pflow worker --temporal temporal.internal:7233 --namespace pflow --task-queue batch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if t.HostPort == "" {
				return &pferr.Error{Kind: pferr.Usage, Message: "pflow worker needs --temporal host:port",
					Hint: "For a local server: temporal server start-dev, then pflow worker --temporal 127.0.0.1:7233"}
			}
			if err := needTemporal(f); err != nil {
				return err
			}
			return f.App.Worker(cmd.Context(), app.WorkerRequest{Temporal: t, MaxConcurrent: maxConcurrent, Ready: func() {
				fmt.Fprintf(f.IO.ErrOut, "pflow worker ready: polling %s\n", &t)
			}})
		},
	}
	addTemporalFlags(cmd.Flags(), &t.HostPort, &t.Namespace, &t.TaskQueue)
	cmd.Flags().IntVar(&maxConcurrent, "max-concurrent", 0, "most steps this worker runs at once (default: Temporal's, 1000)")
	return cmd
}
