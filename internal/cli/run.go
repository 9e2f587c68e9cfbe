package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

type runOptions struct {
	format       string
	print        bool
	outputKey    string
	validateOnly bool
	noTrace      bool
	noRecord     bool
	verbose      bool
	// durable runs (see docs/decisions.md, "Recorded, resumable runs and the
	// step cache")
	resume        string
	rerunUnsafe   bool
	noCache       bool
	trustReadOnly bool
	// Temporal (see docs/decisions.md, "Scale-out on Temporal")
	temporal  string
	namespace string
	taskQueue string
	detach    bool
	// save names the workflow a node call or chain is saved as.
	save string
	// workflowsOnly: the name is a workflow, never a node type (pflow run).
	workflowsOnly bool
	// yes runs a workflow planned from words without asking.
	yes bool
}

// runnerFlags may only appear before the workflow argument.
var runnerFlags = map[string]bool{
	"--output-format": true, "-o": true, "--output-key": true, "-p": true, "--print": true,
	"--validate-only": true, "--no-trace": true, "-v": true, "--verbose": true,
	"--resume": true, "--rerun-unsafe": true, "--no-cache": true, "--no-record": true, "--no-color": true, "--trust-readonly": true,
	"--temporal": true, "--namespace": true, "--task-queue": true, "--detach": true, "--save": true, "--yes": true,
}

// newRunCmd is the root command: pflow [flags] <workflow> [key=value...].
func newRunCmd(f *Factory) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "pflow [flags] <workflow.pflow.md|workflow.json|saved-name|node> [key=value...|--param=value...]",
		Short: "Run deterministic workflows of shell, HTTP, file, LLM, code and MCP steps",
		Long: `pflow runs workflows written as .pflow.md files (or JSON IR), or saved in your
library, passing inputs as key=value. Flags go before the workflow. The workflow may
also be given as its text: markdown (it has a newline) or a JSON IR object.

A request in words (an argument with spaces that is not a file) is planned into a
workflow by the configured LLM (the llm node's model and keys), validated, shown,
and run once you confirm (--yes: at once); inputs follow it as key=value, and
--save NAME keeps it.

pflow also runs one node on its own, its params as flags typed by the node's schema
('@file' reads a file), or a chain of nodes linked by '>>' (one argument: quote it),
each node's main output feeding the next one's main input; --save NAME keeps the
chain as a saved workflow. Piped stdin fills the first node's main input.

A name is looked up in one order: a path (it has a '/' or ends in .md or .json) is
a file; otherwise a saved workflow, then a node type. A name that is both a saved
workflow and a node type is an error: 'pflow run NAME' runs the workflow,
'pflow registry run NAME --param=value' the node.

Examples:
  pflow examples/hello.pflow.md name=World
  pflow --output-format json my-saved-workflow since=v1.2
  echo "some text" | pflow -p summarize.pflow.md
  pflow shell --command='echo hi'
  pflow http --url=https://api.github.com/repos/cli/cli --headers='{"Accept":"application/json"}'
  pflow shell --command='ls' '>>' shell --command='wc -l' --save count-files
  pflow read-file --help
  pflow --yes "count the lines of README.md"`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeWorkflowNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && opts.resume == "" {
				return cmd.Help()
			}
			return runWorkflow(cmd, f, opts, args)
		},
	}
	addRunFlags(cmd, opts)
	return cmd
}

// addRunFlags registers the run flags (shared by `pflow` and `pflow run`).
func addRunFlags(cmd *cobra.Command, opts *runOptions) {
	cmd.Flags().SetInterspersed(false)
	fl := cmd.Flags()
	fl.StringVar(&opts.format, "output-format", "text", "output format: text or json")
	fl.BoolVarP(&opts.print, "print", "p", false, "print only the result value (for pipes)")
	fl.StringVarP(&opts.outputKey, "output-key", "o", "", "print this output (or shared-store path) instead of the first declared output")
	fl.BoolVar(&opts.validateOnly, "validate-only", false, "run every static check without executing (MCP steps' tools are also checked against their servers, which are started; inputs given are checked as a run checks them)")
	fl.BoolVar(&opts.noTrace, "no-trace", false, "do not write a trace file to $PFLOW_HOME/debug")
	fl.BoolVar(&opts.noRecord, "no-record", false, "keep no run record in $PFLOW_HOME/runs (the run cannot be resumed)")
	fl.BoolVarP(&opts.verbose, "verbose", "v", false, "show step details on stderr")
	fl.StringVar(&opts.resume, "resume", "", "continue a recorded run (a run id, or 'last'): its completed steps that are unchanged are not run again; the workflow defaults to the one it ran")
	fl.BoolVar(&opts.rerunUnsafe, "rerun-unsafe", false, "with --resume: run again steps that may have side effects and may have partly run (running when the run stopped)")
	fl.BoolVar(&opts.noCache, "no-cache", false, "neither read nor write the step cache")
	fl.BoolVar(&opts.trustReadOnly, "trust-readonly", false, "trust every MCP server's read-only annotations for this run: its read-only tools are cached (as with \"trust_readonly\": true in its config)")
	addTemporalFlags(fl, &opts.temporal, &opts.namespace, &opts.taskQueue)
	fl.BoolVar(&opts.detach, "detach", false, "with --temporal: submit the run, print its id and return without waiting")
	fl.StringVar(&opts.save, "save", "", "with a node call, a '>>' chain or a request in words: save it to the library as this name (an ordinary .pflow.md)")
	if !opts.workflowsOnly {
		fl.BoolVar(&opts.yes, "yes", false, "with a request in words: run the planned workflow without asking")
	}
}

// newRunSubCmd is `pflow run`, the explicit form of `pflow <workflow>`.
func newRunSubCmd(f *Factory) *cobra.Command {
	opts := &runOptions{workflowsOnly: true}
	cmd := &cobra.Command{
		Use:   "run [flags] <workflow.pflow.md|workflow.json|saved-name> [key=value...]",
		Short: "Run a workflow, or resume a recorded run (same as pflow <workflow>)",
		Long: `Runs a workflow exactly as 'pflow <workflow>' does, but the name is always a
workflow, never a node type. With --resume it continues a recorded run: completed steps that are unchanged (same definition, same resolved
inputs, upstream steps re-used) are not run again; the failed step runs first.

Examples:
  pflow run ./release.pflow.md version=1.2
  pflow run --resume last                      # re-reads the workflow the run ran
  pflow run --resume 20260512-153012-004521-a1b2 ./release.pflow.md`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && opts.resume == "" {
				return cmd.Help()
			}
			return runWorkflow(cmd, f, opts, args)
		},
		ValidArgsFunction: completeWorkflowNames(f),
	}
	addRunFlags(cmd, opts)
	return cmd
}

func runWorkflow(cmd *cobra.Command, f *Factory, opts *runOptions, args []string) error {
	ctx := cmd.Context()
	ios := f.IO
	opts.format = strings.ToLower(opts.format)
	if opts.format != "text" && opts.format != "json" {
		return &pferr.Error{Kind: pferr.Usage, Message: fmt.Sprintf("invalid --output-format %q", opts.format), Hint: "Use --output-format text or --output-format json."}
	}
	jsonMode := opts.format == "json"
	fail := func(err error) error {
		if jsonMode {
			return renderJSONError(ios.Out, err)
		}
		return err
	}
	// With --resume the workflow may be left out: the run's own is re-read.
	var target string
	var rest []string
	if len(args) > 0 && !(opts.resume != "" && strings.Contains(args[0], "=") && !looksLikeWorkflowArg(args[0])) {
		target, rest = args[0], args[1:]
	} else {
		rest = args
	}
	if opts.temporal == "" && (opts.detach || opts.namespace != "" || opts.taskQueue != "") {
		return fail(&pferr.Error{Kind: pferr.Usage, Message: "--detach, --namespace and --task-queue only apply with --temporal",
			Hint: "Run on Temporal with: pflow --temporal 127.0.0.1:7233 [--detach] <workflow> ..."})
	}
	if opts.temporal != "" {
		if err := needTemporal(f); err != nil {
			return fail(err)
		}
	}
	if opts.rerunUnsafe && opts.resume == "" {
		return fail(&pferr.Error{Kind: pferr.Usage, Message: "--rerun-unsafe only applies with --resume",
			Hint: "Resume a run with: pflow --resume <run-id|last> --rerun-unsafe"})
	}
	var misplaced []string
	wantHelp := false
	for _, a := range rest {
		name, _, _ := strings.Cut(a, "=")
		if a == "--help" || a == "-h" {
			wantHelp = true
		} else if runnerFlags[name] {
			misplaced = append(misplaced, name)
		}
	}
	misplacedErr := func() error {
		return &pferr.Error{Kind: pferr.Usage, Message: "flags must come before the workflow: found " + strings.Join(misplaced, ", ") + " after '" + target + "'",
			Hint: fmt.Sprintf("Move them in front, e.g. pflow %s %s ...", strings.Join(misplaced, " "), target)}
	}
	nodes := !opts.workflowsOnly && opts.resume == "" && target != ""
	if nodes && slices.Contains(args, app.ChainSeparator) {
		return runNodes(cmd, f, opts, splitChain(args), fail)
	}
	var t *app.Target
	var err error
	switch {
	case target == "" && opts.temporal != "":
		t, err = f.App.TemporalResumeTarget(ctx, app.TemporalRequest{HostPort: opts.temporal, Namespace: opts.namespace, TaskQueue: opts.taskQueue}, opts.resume)
	case target == "":
		t, err = f.App.ResumeTarget(opts.resume)
	case nodes:
		var rn *app.RunName
		rn, err = f.App.ResolveRunName(ctx, target)
		switch {
		case err != nil && len(misplaced) > 0:
			return misplacedErr()
		case err == nil && rn.Request != "" && len(misplaced) > 0:
			return fail(misplacedErr())
		case err == nil && rn.Request != "":
			return planAndRun(cmd, f, opts, rn.Request, rest, fail)
		case err == nil && rn.Spec != nil && wantHelp:
			writeNodeHelp(ios.Out, rn.Spec)
			return nil
		case err == nil && rn.Spec != nil:
			return runNodes(cmd, f, opts, [][]string{args}, fail)
		case err == nil:
			t = rn.Target
		}
	default:
		t, err = f.App.ResolveTarget(target)
	}
	if len(misplaced) > 0 {
		return misplacedErr()
	}
	if err != nil {
		return fail(commandTypo(cmd, target, err))
	}
	if opts.save != "" {
		return fail(&pferr.Error{Kind: pferr.Usage, Message: fmt.Sprintf("--save applies to node calls and '>>' chains, and '%s' is a workflow", t.Name),
			Hint: "To save a workflow file, run: pflow workflow save <file> --name <name>"})
	}
	if wantHelp {
		writeWorkflowHelp(ios.Out, t)
		return nil
	}
	if err := f.App.CheckOutputKey(cmd.Context(), t.Workflow, opts.outputKey); err != nil {
		return fail(err)
	}
	raw, err := app.ParseParams(rest)
	if err != nil {
		return fail(err)
	}
	params := make(map[string]any, len(raw))
	for k, v := range raw {
		if in := t.Workflow.Inputs.Get(k); in != nil && in.Type != "" {
			params[k] = v // read by the declared type
		} else {
			params[k] = app.InferType(v)
		}
	}
	if err := routeStdin(ios, t.Workflow, params); err != nil {
		return fail(err)
	}
	return execTarget(cmd, f, opts, t, params, fail)
}

// execTarget runs a resolved workflow (or the workflow of node calls) with
// params and renders the outcome.
func execTarget(cmd *cobra.Command, f *Factory, opts *runOptions, t *app.Target, params map[string]any, fail func(error) error) error {
	ctx := cmd.Context()
	ios := f.IO
	jsonMode := opts.format == "json"
	var obs runtime.Observer
	var pr *progress
	if ios.liveProgress() && !jsonMode && !opts.print {
		pr = newProgress(ios.ErrOut, ios.ErrStyle())
		defer pr.Close()
		obs = pr
	}
	if opts.verbose && !jsonMode {
		fmt.Fprintf(ios.ErrOut, "Running %s with %d parameter(s)\n", t.Name, len(params))
	}
	req := app.RunRequest{Target: t, Params: params, ValidateOnly: opts.validateOnly, CheckLive: opts.validateOnly, NoTrace: opts.noTrace, Observer: obs,
		Resume: opts.resume, RerunUnsafe: opts.rerunUnsafe, NoCache: opts.noCache, NoRecord: opts.noRecord, TrustReadOnly: opts.trustReadOnly, Origin: "cli"}
	if a := terminalAsker(ios, pr); a != nil {
		req.Asker = a
	}
	if opts.temporal != "" {
		req.Temporal = &app.TemporalRequest{HostPort: opts.temporal, Namespace: opts.namespace, TaskQueue: opts.taskQueue, Detach: opts.detach}
	}
	out, err := f.App.Run(ctx, req)
	if err != nil {
		return fail(err)
	}
	return renderOutcome(ios, opts, t, out, req.Temporal)
}

// renderOutcome prints a run's outcome as text or JSON and returns its exit.
func renderOutcome(ios *IOStreams, opts *runOptions, t *app.Target, out *app.RunOutcome, temporal *app.TemporalRequest) error {
	jsonMode := opts.format == "json"
	if out.Detached {
		if jsonMode {
			return writeJSON(ios.Out, map[string]any{"success": true, "status": "submitted", "temporal_run_id": out.TemporalID})
		}
		fmt.Fprintf(ios.Out, "Submitted run %s to Temporal at %s.\nFollow it: temporal workflow show --workflow-id %s --address %s\n", out.TemporalID, temporal, out.TemporalID, opts.temporal)
		return nil
	}
	if jsonMode {
		rep := app.Report(out, t, app.Person)
		if opts.outputKey != "" && out.Result != nil && out.Result.Success() {
			if v, _, ok := app.OutputValue(out.Result, opts.outputKey); ok {
				rep.Result = map[string]any{opts.outputKey: out.Redactor.Value(v)}
			}
		}
		if err := writeJSON(ios.Out, rep); err != nil {
			return err
		}
		return exitFor(out)
	}
	return renderText(ios, opts, t, out)
}

func exitFor(out *app.RunOutcome) error {
	if out.Result != nil && out.Result.Interrupted {
		return silentExit(pferr.ExitInterrupted)
	}
	if out.Failed() {
		return silentExit(pferr.ExitFailure)
	}
	if out.Result != nil && out.Result.Status == runtime.RunWaiting {
		return silentExit(pferr.ExitWaiting)
	}
	return nil
}

// routeStdin gives piped text to the input marked `stdin: true`.
func routeStdin(ios *IOStreams, w *workflow.Workflow, params map[string]any) error {
	if !ios.StdinPiped || ios.In == nil {
		return nil
	}
	var target *workflow.Input
	for _, in := range w.Inputs {
		if in.Stdin {
			target = in
			break
		}
	}
	if target != nil {
		if _, given := params[target.Name]; given {
			return nil // the command line wins
		}
	}
	data, err := io.ReadAll(ios.In)
	if err != nil {
		return &pferr.Error{Kind: pferr.Usage, Message: "could not read piped input: " + err.Error()}
	}
	if len(data) == 0 {
		return nil // an empty pipe (e.g. CI with no input) is no input
	}
	if target == nil {
		return &pferr.Error{Kind: pferr.Usage, Message: "Piped input cannot be routed to workflow",
			Hint: "This workflow has no input marked with \"stdin\": true. To accept piped data, add `- stdin: true` to one input declaration, e.g.\n\n### data\nThe text to process.\n- type: string\n- stdin: true"}
	}
	if !utf8.Valid(data) {
		return &pferr.Error{Kind: pferr.Usage, Message: "piped input is binary (not UTF-8 text) and cannot be routed to input '" + target.Name + "'",
			Hint: "Save it to a file and pass the path as a parameter instead."}
	}
	params[target.Name] = strings.TrimSuffix(string(data), "\n")
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// renderJSONError prints a failure as the JSON document every command and
// the MCP server share (docs/json-output.md), so whoever asked for JSON gets
// JSON on stdout.
func renderJSONError(w io.Writer, err error) error {
	pe := pferr.As(err)
	if werr := writeJSON(w, app.Failure(app.ReportError(pe, app.Person))); werr != nil {
		return werr
	}
	return silentExit(pe.ExitCode())
}

func renderText(ios *IOStreams, opts *runOptions, t *app.Target, out *app.RunOutcome) error {
	errw := ios.ErrOut
	red := out.Redactor
	es, outSt := ios.ErrStyle(), ios.OutStyle()
	if len(out.InputErrors) > 0 {
		fmt.Fprintln(errw, es.Failure("✗ Input validation failed:"))
		for _, e := range out.InputErrors {
			fmt.Fprintf(errw, "  • %s\n", red.String(e.Message))
		}
		if len(t.Workflow.Inputs) == 0 {
			fmt.Fprintf(errw, "\nThis workflow takes no inputs: run it as pflow %s\n", t.Name)
		} else {
			fmt.Fprintln(errw)
			for _, line := range app.InputAdvice(t, out.InputErrors, app.Person) {
				fmt.Fprintln(errw, line)
			}
			fmt.Fprintf(errw, "See: pflow %s --help\n", t.Name)
		}
		if len(out.ValidationErrors) == 0 {
			return silentExit(pferr.ExitFailure)
		}
		fmt.Fprintln(errw)
	}
	switch {
	case len(out.ValidationErrors) > 0:
		fmt.Fprintln(errw, es.Failure("✗ Static validation failed:"))
		for i, d := range out.ValidationErrors {
			if i == 20 {
				fmt.Fprintf(errw, "  ... and %d more errors\n", len(out.ValidationErrors)-20)
				break
			}
			fmt.Fprintf(errw, "  • %s%s\n", where(t, d.Line), indentRest(red.String(d.Message), "    "))
			if h := d.Advice(pferr.Person); h != "" {
				fmt.Fprintf(errw, "    %s %s\n", es.Hint("Fix:"), indentRest(red.String(h), "    "))
			}
		}
		printWarnings(errw, out)
		return silentExit(pferr.ExitFailure)
	case out.Result == nil: // --validate-only success
		fmt.Fprintln(ios.Out, outSt.Success("✓ Workflow is valid"))
		printWarnings(errw, out)
		return nil
	}
	r := out.Result
	if opts.verbose {
		printWarnings(errw, out)
	}
	if !r.Success() {
		if r.Interrupted {
			fmt.Fprintln(errw, "\n"+es.Failure("✗ Workflow interrupted"))
		} else {
			fmt.Fprintln(errw, es.Failure("✗ Workflow execution failed"))
		}
		if fl := r.Failure; fl != nil && !r.Interrupted {
			loc := ""
			if fl.Line > 0 && t.Path != "" {
				loc = fmt.Sprintf(" (%s:%d)", t.Path, fl.Line)
			}
			fmt.Fprintf(errw, "\nError at step '%s'%s:\n", fl.NodeID, loc)
			fmt.Fprintf(errw, "  Category: %s\n", fl.Category)
			fmt.Fprintf(errw, "  Message: %s\n", indentRest(red.String(fl.Message), "    "))
			if opts.verbose {
				for _, k := range value.SortedKeys(fl.Details) {
					fmt.Fprintf(errw, "  %s: %s\n", k, red.String(value.Stringify(fl.Details[k])))
				}
			}
		}
		printSteps(errw, r, opts.verbose)
		if out.TracePath != "" {
			fmt.Fprintf(errw, "Workflow trace saved: %s\n", out.TracePath)
		}
		if out.RunID != "" {
			fmt.Fprintf(errw, "%s pflow --resume %s\n", es.Hint("↻ "+resumeAdvice(r)+" (completed steps do not run again):"), out.RunID)
		}
		return exitFor(out)
	}
	if r.Status == runtime.RunWaiting {
		return renderWaiting(ios, opts, t, out)
	}
	v, label, ok := app.OutputValue(r, opts.outputKey)
	if opts.outputKey != "" && !ok {
		avail := strings.Join(r.OutputOrder, ", ")
		if avail == "" {
			avail = "none (the steps their sources read did not run)"
		}
		fmt.Fprintf(errw, "Warning: output key '%s' not found; available outputs: %s\n", opts.outputKey, avail)
	}
	if !opts.print {
		line := es.Success(fmt.Sprintf("✓ Workflow completed in %s", fmtDur(r.Duration)))
		if r.Status == runtime.RunDegraded {
			line = es.Warning(fmt.Sprintf("⚠ Workflow completed with warnings in %s", fmtDur(r.Duration)))
		}
		fmt.Fprintln(errw, line)
		if out.ResumedFrom != "" {
			fmt.Fprintf(errw, "↻ Resumed run %s: %s\n", out.ResumedFrom, reuseSummary(r))
		}
		if !ios.liveProgress() || opts.verbose {
			printSteps(errw, r, opts.verbose)
		}
		if r.Status == runtime.RunDegraded && !opts.verbose {
			for _, w := range r.Warnings {
				fmt.Fprintf(errw, "  %s %s\n", es.Warning("⚠"), indentRest(red.String(w.Message), "    "))
			}
		}
		total := app.Metrics(r)
		if total.CostUSD != nil && *total.CostUSD > 0 {
			fmt.Fprintf(errw, "Cost: $%.4f (%d tokens)\n", *total.CostUSD, total.TokensTotal)
		}
	}
	if ok {
		if !opts.print && label != "" && opts.verbose {
			fmt.Fprintf(errw, "Output (%s):\n", label)
		}
		fmt.Fprintln(ios.Out, red.String(formatValue(v)))
	}
	// The trace of a run that went well is mentioned only with -v (it is
	// always written; `pflow runs show last` finds it).
	if !opts.print && out.TracePath != "" && opts.verbose {
		fmt.Fprintf(errw, "Workflow trace saved: %s\n", out.TracePath)
	}
	return nil
}

func where(t *app.Target, line int) string {
	if line > 0 && t.Path != "" {
		return fmt.Sprintf("%s:%d: ", t.Path, line)
	}
	if line > 0 {
		return fmt.Sprintf("line %d: ", line)
	}
	return ""
}

func printWarnings(w io.Writer, out *app.RunOutcome) {
	if len(out.Warnings) == 0 {
		return
	}
	fmt.Fprintln(w, "Warnings:")
	for _, d := range out.Warnings {
		fmt.Fprintf(w, "  • %s\n", indentRest(out.Redactor.String(d.Message), "    "))
	}
}

// printSteps lists the steps; with logs (-v) also what each step's MCP
// server logged while it ran.
func printSteps(w io.Writer, r *runtime.Result, logs bool) {
	fmt.Fprintf(w, "Steps (%d):\n", len(r.Steps))
	for _, s := range r.Steps {
		printStep(w, s, "  ", logs)
	}
}

func printStep(w io.Writer, s *runtime.Step, indent string, logs bool) {
	mark := map[string]string{runtime.StatusCompleted: "✓", runtime.StatusFailed: "✗", runtime.StatusNotExecuted: "○", runtime.StatusSkipped: "–", runtime.StatusWaiting: "?"}[s.Status]
	line := fmt.Sprintf("%s%s %s", indent, mark, s.NodeID)
	if s.Ran() {
		line += " (" + fmtDur(s.Duration) + ")"
	}
	if s.Batch != nil {
		line += fmt.Sprintf(" - %d/%d items succeeded", s.Batch.Success, s.Batch.Total)
		if s.Batch.Failed > 0 {
			line += fmt.Sprintf(", %d failed", s.Batch.Failed)
		}
	}
	if s.Attempts > 1 {
		line += fmt.Sprintf(" [%d attempts]", s.Attempts)
	}
	switch s.Source {
	case runtime.SourceResumed:
		line += " (re-used)"
	case runtime.SourceCache:
		line += " (cached)"
	}
	if s.Status == runtime.StatusSkipped {
		line += " skipped"
	}
	fmt.Fprintln(w, line)
	if logs {
		for _, l := range s.Logs {
			fmt.Fprintf(w, "%s    log: %s\n", indent, l)
		}
	}
	for _, c := range s.Children {
		printStep(w, c, indent+"  ", logs)
	}
}

// reuseSummary says how many steps a resumed run re-used and ran.
func reuseSummary(r *runtime.Result) string {
	reused, ran := 0, 0
	for _, s := range r.Steps {
		switch {
		case !s.Ran():
		case s.Source == runtime.SourceResumed:
			reused++
		default:
			ran++
		}
	}
	return fmt.Sprintf("%d %s re-used, %d %s run", reused, plural(reused, "step", "steps"), ran, plural(ran, "step", "steps"))
}

// looksLikeWorkflowArg reports whether a key=value-looking argument is a
// workflow file path instead (it names an existing .md or .json file).
func looksLikeWorkflowArg(a string) bool {
	l := strings.ToLower(a)
	return strings.HasSuffix(l, ".md") || strings.HasSuffix(l, ".json")
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any, []any:
		b, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			return value.Stringify(x)
		}
		return string(b)
	default:
		return value.Stringify(x)
	}
}

func indentRest(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// progress shows live step progress on a terminal (stderr): each step's
// line while it runs, with its elapsed time once it has run for a second,
// then its result.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	st      Style
	line    string    // the line being shown for the running step ("" when none)
	started time.Time // when that step started
	stop    chan struct{}
}

func newProgress(w io.Writer, st Style) *progress {
	p := &progress{w: w, st: st, stop: make(chan struct{})}
	go p.tick()
	return p
}

// tick redraws the running step's line with its elapsed time every second.
func (p *progress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.line != "" {
				if d := time.Since(p.started); d >= time.Second {
					fmt.Fprintf(p.w, "\r\033[K%s %s", p.line, p.st.Hint(d.Truncate(time.Second).String()))
				}
			}
			p.mu.Unlock()
		}
	}
}

// Close stops the elapsed-time updates.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
}

func (p *progress) StepStarted(ev runtime.StepEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line != "" {
		// Another step is still running (parallel steps): keep its line.
		fmt.Fprint(p.w, "\n")
	}
	p.line = fmt.Sprintf("%s%s...", strings.Repeat("  ", ev.Depth+1), ev.NodeID)
	p.started = time.Now()
	fmt.Fprint(p.w, p.line)
}

func (p *progress) StepFinished(ev runtime.StepEvent, s *runtime.Step) {
	p.mu.Lock()
	defer p.mu.Unlock()
	mark := p.st.Success("✓")
	switch s.Status {
	case runtime.StatusFailed:
		mark = p.st.Failure("✗")
	case runtime.StatusWaiting:
		mark = p.st.Warning("… waiting")
	}
	if s.Status == runtime.StatusSkipped {
		p.line = ""
		fmt.Fprintf(p.w, "\r\033[K%s%s – skipped\n", strings.Repeat("  ", ev.Depth+1), s.NodeID)
		return
	}
	extra := ""
	if s.Batch != nil {
		extra = fmt.Sprintf(" %d/%d", s.Batch.Success, s.Batch.Total)
	}
	p.line = ""
	fmt.Fprintf(p.w, "\r\033[K%s%s%s %s %s\n", strings.Repeat("  ", ev.Depth+1), s.NodeID, extra, mark, fmtDur(s.Duration))
}

func (p *progress) BatchProgress(ev runtime.StepEvent, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = fmt.Sprintf("%s%s... %d/%d", strings.Repeat("  ", ev.Depth+1), ev.NodeID, done, total)
	fmt.Fprintf(p.w, "\r\033[K%s", p.line)
}

// writeWorkflowHelp shows a workflow's interface for `pflow <wf> --help`.
func writeWorkflowHelp(w io.Writer, t *app.Target) {
	wf := t.Workflow
	fmt.Fprintf(w, "Workflow: %s\n", t.Name)
	src := "file " + t.Path
	if t.Saved {
		src = "saved workflow (" + t.Path + ")"
	}
	fmt.Fprintf(w, "Source: %s\n", src)
	desc := ""
	if wf.Source != nil {
		desc = wf.Source.Description
		if desc == "" {
			desc = wf.Source.Title
		}
	}
	if desc != "" {
		fmt.Fprintf(w, "Description: %s\n", desc)
	}
	fmt.Fprintln(w, "\nInputs:")
	if len(wf.Inputs) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	var required []string
	for _, in := range wf.Inputs {
		req := "optional"
		if in.IsRequired() {
			req = "required"
			required = append(required, in.Name)
		}
		typ := in.Type
		if typ == "" {
			typ = "any"
		}
		fmt.Fprintf(w, "  - %s (%s, %s): %s\n", in.Name, typ, req, in.Description)
		if in.Default != nil {
			fmt.Fprintf(w, "    Default: %s\n", value.Stringify(in.Default))
		}
		if in.Stdin {
			fmt.Fprintln(w, "    Accepts piped stdin")
		}
		if in.Env != "" {
			fmt.Fprintf(w, "    From the environment: $%s (when not given)\n", in.Env)
		}
	}
	if len(wf.Outputs) > 0 {
		fmt.Fprintln(w, "\nOutputs:")
		for _, o := range wf.Outputs {
			fmt.Fprintf(w, "  - %s: %s\n", o.Name, o.Description)
		}
	}
	sort.Strings(required)
	ex := "pflow " + t.Name
	for _, r := range required {
		ex += " " + r + "=<value>"
	}
	fmt.Fprintf(w, "\nExample:\n  %s\n", ex)
}

// completeWorkflowNames completes saved workflow names and .pflow.md files.
func completeWorkflowNames(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		if list, err := f.App.Library().List(""); err == nil {
			for _, s := range list {
				names = append(names, s.Name)
			}
		}
		return names, cobra.ShellCompDirectiveDefault
	}
}

// resumeAdvice says what to do before resuming a run that did not finish:
// an interrupted run needs nothing; a failed step needs its cause fixed,
// which is the workflow only when a template or a param was wrong.
func resumeAdvice(r *runtime.Result) string {
	fl := r.Failure
	switch {
	case r.Interrupted || fl == nil || fl.Category == runtime.CategoryInterrupted:
		return "Resume where it stopped"
	case fl.Category == runtime.CategoryTemplate:
		return fmt.Sprintf("Fix step '%s' in the workflow, then resume", fl.NodeID)
	default:
		return fmt.Sprintf("Fix what made step '%s' fail (the message above says what), then resume", fl.NodeID)
	}
}
