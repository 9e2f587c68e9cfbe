package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// planAndRun is `pflow "<request>"`: the configured LLM plans a workflow
// (app.Plan), the plan is shown and, on a terminal, confirmed before it
// runs (--yes runs it at once). Without a terminal and without --yes the
// workflow is printed and not run. rest are the inputs as key=value.
func planAndRun(cmd *cobra.Command, f *Factory, opts *runOptions, request string, rest []string, fail func(error) error) error {
	ctx := cmd.Context()
	ios := f.IO
	jsonMode := opts.format == "json"
	if opts.save != "" {
		if err := f.App.CheckSaveName(opts.save); err != nil {
			return fail(err)
		}
	}
	raw, err := app.ParseParams(rest)
	if err != nil {
		return fail(err)
	}
	progress := func(s string) {
		if !jsonMode && !opts.print {
			fmt.Fprintln(ios.ErrOut, s)
		}
	}
	p, err := f.App.Plan(ctx, app.PlanRequest{Request: request, Progress: progress})
	if err != nil {
		return fail(err)
	}
	t := p.Target
	run := opts.yes || opts.validateOnly
	if !run && ios.InTTY {
		writePlanSummary(ios.ErrOut, p, raw)
		fmt.Fprint(ios.ErrOut, "Run it? [y/N]: ")
		line, _ := bufio.NewReader(ios.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintf(ios.ErrOut, "Not run. The workflow is in %s: run it with %s\n", p.DraftPath, runCommand(p.DraftPath, raw))
			return nil
		}
		run = true
	}
	if !run {
		return printPlan(ctx, f, opts, p, raw)
	}
	if !jsonMode && !opts.print && !ios.InTTY {
		writePlanSummary(ios.ErrOut, p, raw)
	}
	params := make(map[string]any, len(raw))
	for k, v := range raw {
		if in := t.Workflow.Inputs.Get(k); in != nil && in.Type != "" {
			params[k] = v // read by the declared type
		} else {
			params[k] = app.InferType(v)
		}
	}
	if err := f.App.CheckOutputKey(ctx, t.Workflow, opts.outputKey); err != nil {
		return fail(err)
	}
	if err := routeStdin(ios, t.Workflow, params); err != nil {
		return fail(err)
	}
	if err := execTarget(cmd, f, opts, t, params, fail); err != nil || opts.save == "" || opts.validateOnly {
		return err
	}
	saved, err := f.App.SavePlan(ctx, p, opts.save)
	if err != nil {
		return fail(err)
	}
	if !jsonMode {
		fmt.Fprintf(ios.ErrOut, "%s Saved as '%s' (%s). Run it: pflow %s\n", ios.ErrStyle().Success("✓"), saved.Saved.Name, saved.Saved.Path, saved.Saved.Name)
	}
	return nil
}

// printPlan answers a plan that is not run (no terminal to ask on, no
// --yes): the workflow's text on stdout (or the JSON envelope), how to run
// it on stderr; --save keeps it in the library.
func printPlan(ctx context.Context, f *Factory, opts *runOptions, p *app.PlanOutcome, raw map[string]string) error {
	ios := f.IO
	runWith := runCommand(p.DraftPath, raw)
	var savedPath string
	if opts.save != "" {
		saved, err := f.App.SavePlan(ctx, p, opts.save)
		if err != nil {
			if opts.format == "json" {
				return renderJSONError(ios.Out, err)
			}
			return err
		}
		savedPath = saved.Saved.Path
		runWith = runCommand(saved.Saved.Name, raw)
	}
	if opts.format == "json" {
		out := map[string]any{"success": true, "status": "planned", "workflow": p.Markdown, "draft_path": p.DraftPath,
			"model": p.Model, "repairs": p.Repairs, "run_with": runWith}
		if savedPath != "" {
			out["saved_path"] = savedPath
		}
		return writeJSON(ios.Out, out)
	}
	fmt.Fprint(ios.Out, p.Markdown)
	if savedPath != "" {
		fmt.Fprintf(ios.ErrOut, "Saved as '%s' (%s).\n", opts.save, savedPath)
	}
	fmt.Fprintf(ios.ErrOut, "Not run: there is no terminal to ask on. Run it with: %s (or plan and run at once with --yes)\n", runWith)
	return nil
}

// writePlanSummary shows a planned workflow: its title, steps and inputs.
func writePlanSummary(w io.Writer, p *app.PlanOutcome, raw map[string]string) {
	wf := p.Target.Workflow
	title := p.Target.Name
	desc := ""
	if wf.Source != nil {
		if wf.Source.Title != "" {
			title = wf.Source.Title
		}
		desc = firstLine(wf.Source.Description)
	}
	fmt.Fprintf(w, "\nPlanned workflow: %s\n", title)
	if desc != "" {
		fmt.Fprintf(w, "  %s\n", desc)
	}
	fmt.Fprintln(w, "Steps:")
	for i, n := range wf.Nodes {
		fmt.Fprintf(w, "  %d. %s (%s)", i+1, n.ID, n.Type)
		if n.Purpose != "" {
			fmt.Fprintf(w, ": %s", cut(firstLine(n.Purpose), 120))
		}
		fmt.Fprintln(w)
	}
	if len(wf.Inputs) > 0 {
		fmt.Fprintln(w, "Inputs:")
		for _, in := range wf.Inputs {
			writePlanInput(w, in, raw)
		}
	}
	how := "written by " + p.Model
	if p.Repairs > 0 {
		how += fmt.Sprintf(", repaired %d time(s) after validation", p.Repairs)
	}
	fmt.Fprintf(w, "File: %s (%s)\n\n", p.DraftPath, how)
}

func writePlanInput(w io.Writer, in *workflow.Input, raw map[string]string) {
	fmt.Fprintf(w, "  %s", inputSummary(in))
	if d := firstLine(in.Description); d != "" {
		fmt.Fprintf(w, ": %s", cut(d, 120))
	}
	if v, ok := raw[in.Name]; ok {
		fmt.Fprintf(w, " = %s", cut(v, 60))
	}
	fmt.Fprintln(w)
}

// runCommand is the command line that runs name with the given inputs.
func runCommand(name string, raw map[string]string) string {
	parts := []string{"pflow", shellQuote(name)}
	for _, k := range value.SortedKeys(raw) {
		parts = append(parts, shellQuote(k+"="+raw[k]))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
