package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
)

// newRunsCmd is 'pflow runs': the recorded runs (see docs/decisions.md,
// "Recorded, resumable runs and the step cache").
func newRunsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	var limit int
	var t app.TemporalRequest
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recorded runs; show one as a timeline; resume one with pflow --resume",
		Long: `Every run is recorded under $PFLOW_HOME/runs/<id>: the workflow as it ran, its
inputs (secret ones only as digests), and each step's status, timing and outputs.
A failed run is a checkpoint: fix the workflow and resume it with
'pflow --resume <id|last>'; completed steps that are unchanged do not run again.

Old records are removed by the retention setting (settings.json "retention":
keep the newest 100 runs, none older than 30 days, by default).`,
		Example: `  pflow runs
  pflow runs show last
  pflow --resume last
  pflow runs --temporal 127.0.0.1:7233     # runs submitted to Temporal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if t.HostPort != "" {
				if err := needTemporal(f); err != nil {
					return err
				}
				list, err := f.App.TemporalRuns(cmd.Context(), t, limit)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(f.IO.Out, map[string]any{"runs": list, "count": len(list), "temporal": t.HostPort})
				}
				renderTemporalRuns(f.IO.Out, list, &t)
				return nil
			}
			list, err := f.App.ListRuns(limit)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(f.IO.Out, map[string]any{"runs": list, "count": len(list)})
			}
			renderRuns(f.IO.Out, list)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().IntVarP(&limit, "limit", "n", 20, "how many runs to list, newest first (0: all)")
	addTemporalFlags(cmd.Flags(), &t.HostPort, &t.Namespace, &t.TaskQueue)
	cmd.AddCommand(newRunsShowCmd(f), newRunsPruneCmd(f), newRunsAnswerCmd(f))
	return cmd
}

func renderTemporalRuns(w io.Writer, list []wire.RunInfo, t *app.TemporalRequest) {
	if len(list) == 0 {
		fmt.Fprintf(w, "No pflow runs on Temporal at %s yet. Submit one with: pflow --temporal %s <workflow>\n", t, t.HostPort)
		return
	}
	fmt.Fprintf(w, "%-36s  %-11s  %-19s  %9s  %s\n", "TEMPORAL RUN", "STATUS", "STARTED", "DURATION", "WORKFLOW")
	for _, r := range list {
		dur := "-"
		if !r.Closed.IsZero() {
			dur = fmtDur(r.Closed.Sub(r.Started))
		}
		line := fmt.Sprintf("%-36s  %-11s  %-19s  %9s  %s", r.ID, r.Status, r.Started.Local().Format("2006-01-02 15:04:05"), dur, r.Workflow)
		if r.FailedStep != "" {
			line += "  (failed at '" + r.FailedStep + "')"
		}
		fmt.Fprintln(w, line)
		if q := r.Question; q != nil {
			fmt.Fprintf(w, "    asks at '%s': %s — pflow runs answer --temporal %s %s <%s>\n", q.ID, cut(firstLine(q.Message), 60), t.HostPort, r.ID, strings.Join(q.Choices, "|"))
		}
	}
	fmt.Fprintf(w, "\nA run's history: temporal workflow show --workflow-id <run> --address %s\n", t.HostPort)
}

func renderRuns(w io.Writer, list []runs.Summary) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No recorded runs yet. Every workflow run is recorded; run one with: pflow <workflow>")
		return
	}
	fmt.Fprintf(w, "%-27s  %-11s  %-19s  %9s  %s\n", "RUN", "STATUS", "STARTED", "DURATION", "WORKFLOW")
	for _, r := range list {
		dur := "-"
		if r.DurationMS > 0 {
			dur = fmtDur(time.Duration(r.DurationMS * float64(time.Millisecond)))
		}
		line := fmt.Sprintf("%-27s  %-11s  %-19s  %9s  %s", r.ID, r.Status, r.Started.Local().Format("2006-01-02 15:04:05"), dur, r.Workflow)
		var notes []string
		if r.FailedStep != "" {
			notes = append(notes, "failed at '"+r.FailedStep+"'")
		}
		if r.ResumedFrom != "" {
			notes = append(notes, fmt.Sprintf("resumed %s: %d re-used", r.ResumedFrom, r.Resumed))
		}
		if r.Cached > 0 {
			notes = append(notes, fmt.Sprintf("%d cached", r.Cached))
		}
		if r.Question != nil && r.Answer == nil {
			notes = append(notes, fmt.Sprintf("asks at '%s': %s — pflow runs answer %s <%s>", r.Question.ID, cut(firstLine(r.Question.Message), 60), r.ID, strings.Join(r.Question.Choices, "|")))
		}
		if r.Answer != nil {
			notes = append(notes, fmt.Sprintf("answered %s through %s; continued by %s", r.Answer.Choice, r.Answer.Channel, r.Answer.ContinuedBy))
		}
		if len(notes) > 0 {
			line += "  (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintln(w, line)
	}
}

func newRunsShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <run-id|last>",
		Short: "Show a recorded run: its steps as a timeline with their outputs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := f.App.ShowRun(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(f.IO.Out, d)
			}
			renderRun(f.IO.Out, d)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON (every step with its outputs)")
	return cmd
}

func renderRun(w io.Writer, d *app.RunDetail) {
	m := d.Meta
	fmt.Fprintf(w, "Run %s\n", m.ID)
	fmt.Fprintf(w, "  Workflow: %s", m.Workflow.Name)
	if m.Workflow.Path != "" && m.Workflow.Path != m.Workflow.Name {
		fmt.Fprintf(w, " (%s)", m.Workflow.Path)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  Status:   %s", d.Summary.Status)
	if d.Status != nil {
		fmt.Fprintf(w, " in %s", fmtDur(time.Duration(d.Status.DurationMS*float64(time.Millisecond))))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  Started:  %s\n", m.Started.Local().Format("2006-01-02 15:04:05.000"))
	if m.ResumedFrom != "" {
		fmt.Fprintf(w, "  Resumed:  from run %s\n", m.ResumedFrom)
	}
	if len(m.Inputs)+len(m.SecretInputs) > 0 {
		fmt.Fprintln(w, "  Inputs:")
		for _, k := range value.SortedKeys(m.Inputs) {
			fmt.Fprintf(w, "    %s = %s\n", k, cut(value.Stringify(m.Inputs[k]), 100))
		}
		for _, k := range value.SortedKeys(m.SecretInputs) {
			fmt.Fprintf(w, "    %s = <secret, not recorded>\n", k)
		}
	}
	if d.Status != nil && d.Status.Error != "" {
		fmt.Fprintf(w, "  Error at '%s': %s\n", d.Status.FailedStep, indentRest(d.Status.Error, "    "))
	}
	if q := d.Summary.Question; q != nil {
		fmt.Fprintf(w, "  Asks at '%s': %s\n", q.ID, indentRest(q.Message, "    "))
		fmt.Fprintf(w, "  Choices:  %s\n", strings.Join(q.Choices, ", "))
		if q.Who != "" {
			fmt.Fprintf(w, "  Who:      %s\n", q.Who)
		}
		if a := d.Summary.Answer; a != nil {
			fmt.Fprintf(w, "  Answer:   %s (through %s, by %s, at %s); continued by run %s\n", a.Choice, a.Channel, a.AnsweredBy, a.AnsweredAt.Local().Format("2006-01-02 15:04:05"), a.ContinuedBy)
		}
	}
	if d.Status != nil && d.Status.RecordIncomplete != "" {
		fmt.Fprintf(w, "  Warning: the record is incomplete (%s)\n", d.Status.RecordIncomplete)
	}
	fmt.Fprintf(w, "\nTimeline (%d entries):\n", len(d.Steps))
	shownItems := map[string]int{}
	for _, s := range d.Steps {
		if s.Item != nil && s.Status == runtime.StatusCompleted && s.Source == "" {
			// Completed items are summarised by their batch step; show a few.
			shownItems[s.Path]++
			if shownItems[s.Path] > 3 {
				continue
			}
		}
		mark := map[string]string{runtime.StatusCompleted: "✓", runtime.StatusFailed: "✗", runs.StateRunning: "…", runtime.StatusSkipped: "–", runtime.StatusWaiting: "?"}[s.Status]
		name := s.Path
		if s.Item != nil {
			name = fmt.Sprintf("%s[%d]", s.Path, *s.Item)
		}
		if s.Occurrence > 1 {
			name += fmt.Sprintf(" (#%d)", s.Occurrence)
		}
		line := fmt.Sprintf("  +%9s  %s %s (%s)", fmtDur(time.Duration(s.OffsetMS*float64(time.Millisecond))), mark, name, s.Type)
		switch {
		case s.Status == runtime.StatusSkipped:
			line = fmt.Sprintf("  +%9s  %s %s (%s) skipped", fmtDur(time.Duration(s.OffsetMS*float64(time.Millisecond))), mark, name, s.Type)
		case s.Status == runs.StateRunning:
			line += " — was running when the run stopped; it may have partly run"
		case s.Source == runtime.SourceResumed:
			line += " re-used from run " + s.From
		case s.Source == runtime.SourceCache:
			line += " served from the step cache"
		default:
			line += " " + fmtDur(time.Duration(s.DurationMS*float64(time.Millisecond)))
		}
		if s.Attempts > 1 {
			line += fmt.Sprintf(" [%d attempts]", s.Attempts)
		}
		fmt.Fprintln(w, line)
		if s.Error != "" {
			fmt.Fprintf(w, "      error: %s\n", indentRest(cut(firstLine(s.Error), 200), "      "))
		}
		if s.Status == runtime.StatusCompleted && len(s.Outputs) > 0 && s.Item == nil {
			for _, k := range sortedOutputKeys(s.Outputs) {
				fmt.Fprintf(w, "      %s: %s\n", k, cut(firstLine(value.Stringify(s.Outputs[k])), 100))
			}
		}
		if s.NotReused != "" {
			fmt.Fprintf(w, "      (not re-usable by a resume: %s)\n", s.NotReused)
		}
	}
	for path, n := range shownItems {
		if n > 3 {
			fmt.Fprintf(w, "  (%d more completed items of '%s' not shown; --json lists all)\n", n-3, path)
		}
	}
	if d.Status != nil && d.Status.Derived > 0 {
		fmt.Fprintf(w, "  (%d completed execution(s) of pure nodes (such as echo and switch) not listed: the record leaves them out, and a resume runs them again from the outputs above)\n", d.Status.Derived)
	}
	if d.Skipped > 0 {
		fmt.Fprintf(w, "  (%d unreadable record line(s) skipped: the end of a run that stopped mid-write)\n", d.Skipped)
	}
	switch d.Summary.Status {
	case runs.StateWaiting:
		fmt.Fprintf(w, "\nAnswer it (finished steps do not run again): pflow runs answer %s <%s>\n", m.ID, strings.Join(d.Summary.Question.Choices, "|"))
		return
	case runs.StateAnswered:
		return
	}
	if d.Summary.Status != runtime.RunSuccess && d.Summary.Status != runtime.RunDegraded && d.Summary.Status != runs.StateRunning {
		fmt.Fprintf(w, "\nResume it after fixing the workflow: pflow --resume %s\n", m.ID)
	}
}

// sortedOutputKeys lists up to three outputs worth showing, the main ones
// (stdout, response, ...) first; empty and false values are left out.
func sortedOutputKeys(m map[string]any) []string {
	var keys []string
	for _, k := range value.SortedKeys(m) {
		switch v := m[k].(type) {
		case nil:
			continue
		case string:
			if v == "" {
				continue
			}
		case bool:
			if !v {
				continue
			}
		}
		keys = append(keys, k)
	}
	rank := map[string]int{"stdout": 0, "response": 0, "result": 0, "content": 0, "echo": 0}
	sort.SliceStable(keys, func(i, j int) bool {
		ri, oki := rank[keys[i]]
		rj, okj := rank[keys[j]]
		if oki != okj {
			return oki
		}
		return ri < rj
	})
	if len(keys) > 3 {
		keys = keys[:3]
	}
	return keys
}

func newRunsPruneCmd(f *Factory) *cobra.Command {
	var keep, days int
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove old run records now (by the retention setting, or the limits given)",
		Example: `  pflow runs prune                 # apply settings.json "retention"
  pflow runs prune --keep 10       # keep only the newest 10 runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := f.App.PruneRuns(keep, days)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "Removed %d run %s\n", n, plural(n, "record", "records"))
			return nil
		},
	}
	cmd.Flags().IntVar(&keep, "keep", -1, "keep the newest N runs (default: settings retention.max_count)")
	cmd.Flags().IntVar(&days, "max-age-days", -1, "remove runs older than N days (default: settings retention.max_age_days)")
	return cmd
}

// newCacheCmd is 'pflow cache': the step cache (see docs/decisions.md,
// "Recorded, resumable runs and the step cache").
func newCacheCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List or clear the step cache (results of pure steps)",
		Long: `The step cache keeps the outputs of pure steps, keyed by node type and version,
effective params and input data: read-only tools of MCP servers marked
"trust_readonly": true (or every server with --trust-readonly), and steps that
opt in with '- cache: true' or a TTL ('- cache: 1h'). Entries expire; a run with
--no-cache neither reads nor writes it.`,
	}
	cmd.AddCommand(newCacheListCmd(f), newCacheClearCmd(f))
	return cmd
}

func newCacheListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List step cache entries, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := f.App.CacheList()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(f.IO.Out, map[string]any{"entries": list, "count": len(list)})
			}
			w := f.IO.Out
			if len(list) == 0 {
				fmt.Fprintln(w, "The step cache is empty.")
				return nil
			}
			fmt.Fprintf(w, "%-16s  %-30s  %-19s  %-19s  %8s  %s\n", "KEY", "NODE TYPE", "CREATED", "EXPIRES", "BYTES", "STEP")
			for _, e := range list {
				exp := e.Expires.Local().Format("2006-01-02 15:04:05")
				if e.Expired {
					exp = "expired"
				}
				step := e.Step
				if e.Workflow != "" {
					step += " in " + e.Workflow
				}
				fmt.Fprintf(w, "%-16s  %-30s  %-19s  %-19s  %8d  %s\n", e.Key[:16], cut(e.NodeType, 30), e.Created.Local().Format("2006-01-02 15:04:05"), exp, e.Bytes, step)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newCacheClearCmd(f *Factory) *cobra.Command {
	var expired, yes bool
	cmd := &cobra.Command{
		Use:   "clear",
		Short: "Remove step cache entries (all, or only expired ones)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !expired { // removing only expired entries loses nothing
				if err := confirm(f, yes, "Remove every step cache entry?", "pflow cache clear"); err != nil {
					return err
				}
			}
			n, err := f.App.CacheClear(expired)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "Removed %d cache %s\n", n, plural(n, "entry", "entries"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&expired, "expired", false, "remove only expired entries")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "clear without asking (required when there is no terminal to ask on)")
	return cmd
}
