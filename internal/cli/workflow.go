package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/discovery"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// newWorkflowCmd is the 'pflow workflow' command group.
func newWorkflowCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Save, list, describe, find and delete workflows in your library",
		Long: `The library holds workflows saved under $PFLOW_HOME/workflows. A saved workflow
runs by name: pflow <name> key=value...`,
	}
	cmd.AddCommand(newWorkflowSaveCmd(f), newWorkflowListCmd(f), newWorkflowDescribeCmd(f),
		newWorkflowDeleteCmd(f), newWorkflowDiscoverCmd(f), newWorkflowGraphCmd(f))
	return cmd
}

func newWorkflowSaveCmd(f *Factory) *cobra.Command {
	var req app.SaveFileRequest
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "save <file.pflow.md> [--name NAME]",
		Short: "Validate a workflow file and save it to the library",
		Example: `  pflow workflow save ./hello.pflow.md --name hello
  pflow workflow save ./hello.pflow.md --name hello --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Path = args[0]
			if req.Name == "" {
				base := strings.TrimSuffix(filepath.Base(req.Path), filepath.Ext(req.Path))
				base = strings.TrimSuffix(base, ".pflow")
				req.Name = library.SuggestName(base)
				if err := library.ValidateName(req.Name); err != nil {
					return &pferr.Error{Kind: pferr.Usage, Message: "no --name given and the file name does not make a valid workflow name",
						Hint: "Pass --name, e.g. pflow workflow save " + req.Path + " --name my-workflow"}
				}
			}
			out, overwritten, err := f.App.SaveFile(cmd.Context(), req)
			if err != nil {
				return err
			}
			s := out.Saved
			if asJSON {
				return writeJSON(f.IO.Out, map[string]any{"success": true, "name": s.Name, "path": s.Path,
					"overwritten": overwritten, "warnings": nonNil(out.Warnings), "draft_deleted": out.DraftDeleted})
			}
			w := f.IO.Out
			if overwritten {
				fmt.Fprintf(w, "✓ Overwritten existing workflow '%s'\n", s.Name)
			}
			fmt.Fprintf(w, "✓ Saved workflow '%s' to library\n", s.Name)
			fmt.Fprintf(w, "  Location: %s\n", s.Path)
			fmt.Fprintf(w, "  Execute with: %s\n", app.SavedExampleCommand(s.Name, s.Workflow))
			var optional []string
			for _, in := range s.Workflow.Inputs {
				if !in.IsRequired() {
					optional = append(optional, in.Name)
				}
			}
			if len(optional) > 0 {
				fmt.Fprintf(w, "  Optional params: %s\n", strings.Join(optional, ", "))
			}
			if out.DraftDeleted != "" {
				fmt.Fprintf(w, "  Deleted draft: %s\n", out.DraftDeleted)
			}
			for _, warn := range out.Warnings {
				fmt.Fprintf(f.IO.ErrOut, "Warning: %s\n", warn)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Name, "name", "", "library name (lowercase letters, digits, single hyphens; default: from the file name)")
	fl.StringVar(&req.Description, "description", "", "description shown in listings (default: the workflow's own)")
	fl.BoolVar(&req.Force, "force", false, "overwrite an existing workflow of the same name")
	fl.BoolVar(&req.DeleteDraft, "delete-draft", false, "delete the file after saving if it is a draft in $PFLOW_HOME/drafts")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func newWorkflowListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [filter words...]",
		Short: "List saved workflows (words filter by name and description)",
		RunE: func(cmd *cobra.Command, args []string) error {
			filter := strings.Join(args, " ")
			list, err := f.App.Library().List(filter)
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]savedJSON, 0, len(list))
				for _, s := range list {
					out = append(out, savedOf(s))
				}
				return writeJSON(f.IO.Out, map[string]any{"workflows": out, "total": len(out)})
			}
			w := f.IO.Out
			if len(list) == 0 {
				if filter != "" {
					fmt.Fprintf(w, "No workflows match filter: '%s'\n", filter)
					fmt.Fprintln(w, "  Run 'pflow workflow list' to see all, or 'pflow workflow discover \"<task>\"' to search by meaning.")
				} else {
					fmt.Fprintln(w, "No saved workflows yet.")
					fmt.Fprintln(w, "  Save one with: pflow workflow save <file.pflow.md> --name <name>")
				}
				return nil
			}
			fmt.Fprintln(w, "Saved Workflows:")
			fmt.Fprintln(w, strings.Repeat("─", 40))
			for _, s := range list {
				fmt.Fprintf(w, "\n%s\n", s.Name)
				if d := firstLine(s.Description); d != "" {
					fmt.Fprintf(w, "  %s\n", d)
				}
			}
			fmt.Fprintf(w, "\nTotal: %d %s\n", len(list), plural(len(list), "workflow", "workflows"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func newWorkflowDescribeCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:               "describe <name>",
		Short:             "Show a saved workflow's inputs, outputs, history and an example command",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkflowNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.App.Library().Load(strings.TrimSuffix(args[0], library.Ext))
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(f.IO.Out, app.SavedInfoOf(s, true))
			}
			writeSavedDescription(f.IO.Out, s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the description as JSON")
	return cmd
}

// writeSavedDescription renders a saved workflow's interface as text.
func writeSavedDescription(w io.Writer, s *library.Saved) {
	fmt.Fprintf(w, "Workflow: %s\n", s.Name)
	desc := strings.TrimSpace(s.Description)
	if desc == "" {
		desc = "(no description)"
	}
	fmt.Fprintf(w, "Description: %s\n", desc)
	fmt.Fprintf(w, "Location: %s\n", s.Path)
	wf := s.Workflow
	fmt.Fprintln(w, "\nInputs:")
	if len(wf.Inputs) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, in := range wf.Inputs {
		fmt.Fprintf(w, "  - %s", inputSummary(in))
		if in.Description != "" {
			fmt.Fprintf(w, ": %s", firstLine(in.Description))
		}
		fmt.Fprintln(w)
		if in.Default != nil {
			fmt.Fprintf(w, "    Default: %s\n", value.Stringify(in.Default))
		}
	}
	fmt.Fprintln(w, "\nOutputs:")
	if len(wf.Outputs) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, o := range wf.Outputs {
		fmt.Fprintf(w, "  - %s", o.Name)
		if o.Type != "" {
			fmt.Fprintf(w, " (%s)", o.Type)
		}
		if o.Description != "" {
			fmt.Fprintf(w, ": %s", firstLine(o.Description))
		}
		fmt.Fprintln(w)
	}
	var types []string
	seen := map[string]bool{}
	for _, n := range wf.Nodes {
		if !seen[n.Type] {
			seen[n.Type] = true
			types = append(types, n.Type)
		}
	}
	fmt.Fprintf(w, "\nSteps: %d (%s)\n", len(wf.Nodes), strings.Join(types, ", "))
	m := s.Meta
	if m.ExecutionCount > 0 {
		fmt.Fprintln(w, "\nExecution History:")
		fmt.Fprintf(w, "  Runs: %d %s\n", m.ExecutionCount, plural(m.ExecutionCount, "time", "times"))
		if t, err := time.Parse(time.RFC3339Nano, m.LastExecutionTimestamp); err == nil {
			fmt.Fprintf(w, "  Last: %s\n", t.Local().Format("2006-01-02 15:04:05"))
		}
		fmt.Fprintf(w, "  Duration: %.2fs\n", m.LastExecutionDurationSeconds)
		fmt.Fprintf(w, "  Average: %.2fs\n", m.AverageExecutionDurationSeconds)
		if m.LastExecutionSuccess != nil && *m.LastExecutionSuccess {
			fmt.Fprintln(w, "  Status: ✓ Success")
		}
		if len(m.LastExecutionParams) > 0 {
			keys := value.SortedKeys(m.LastExecutionParams)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+"="+value.Stringify(m.LastExecutionParams[k]))
			}
			fmt.Fprintf(w, "  Last Parameters: %s\n", strings.Join(kv, ", "))
		}
	}
	fmt.Fprintln(w, "\nExample Usage:")
	fmt.Fprintf(w, "  %s\n", app.SavedExampleCommand(s.Name, wf))
}

func newWorkflowDeleteCmd(f *Factory) *cobra.Command {
	var asJSON, yes bool
	cmd := &cobra.Command{
		Use:               "delete <name>",
		Short:             "Delete a saved workflow",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkflowNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib := f.App.Library()
			name := strings.TrimSuffix(args[0], library.Ext)
			path := lib.Path(name)
			if lib.Exists(name) {
				if err := confirm(f, yes, fmt.Sprintf("Delete the saved workflow '%s'?", name), "pflow workflow delete "+name); err != nil {
					return err
				}
			}
			if err := lib.Delete(name); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(f.IO.Out, map[string]any{"success": true, "name": name, "path": path})
			}
			fmt.Fprintf(f.IO.Out, "✓ Deleted workflow '%s' (%s)\n", name, path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking (required when there is no terminal to ask on)")
	return cmd
}

func newWorkflowDiscoverCmd(f *Factory) *cobra.Command {
	var asJSON, useLLM bool
	var limit int
	cmd := &cobra.Command{
		Use:   `discover "<task description>"`,
		Short: "Find saved workflows that fit a task (offline ranking; --llm reranks)",
		Example: `  pflow workflow discover "write release notes since the last tag"
  pflow workflow discover --json "summarize slack messages"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.Join(args, " ")
			ms, total, err := f.App.RankSavedWorkflows(query, limit)
			if err != nil {
				return err
			}
			if useLLM {
				ms = f.App.RerankWorkflows(cmd.Context(), query, ms)
			}
			lib := f.App.Library()
			type hit struct {
				m discovery.Match
				s *library.Saved
			}
			var hits []hit
			for _, m := range ms {
				s, err := lib.Load(m.Name)
				if err != nil {
					continue
				}
				hits = append(hits, hit{m, s})
			}
			if asJSON {
				out := make([]savedJSON, 0, len(hits))
				for _, h := range hits {
					j := savedOf(h.s)
					conf, reasons := h.m.Confidence, nonNil(h.m.Reasons)
					j.Metadata, j.Confidence, j.Reasons = nil, &conf, &reasons
					j.Example = app.SavedExampleCommand(h.s.Name, h.s.Workflow)
					out = append(out, j)
				}
				return writeJSON(f.IO.Out, map[string]any{"query": query, "matches": out, "searched": total})
			}
			w := f.IO.Out
			if len(hits) == 0 {
				fmt.Fprintf(w, "No saved workflow matches %q (searched %d).\n", query, total)
				if total == 0 {
					fmt.Fprintln(w, "  The library is empty. Save one with: pflow workflow save <file.pflow.md> --name <name>")
				} else {
					fmt.Fprintln(w, "  Run 'pflow workflow list' to see them all, or build a new workflow ('pflow registry discover \"<task>\"' finds nodes).")
				}
				return nil
			}
			fmt.Fprintf(w, "Found %d matching %s for %q (searched %d):\n", len(hits), plural(len(hits), "workflow", "workflows"), query, total)
			for i, h := range hits {
				fmt.Fprintf(w, "\n%d. %s  (confidence %.2f)\n", i+1, h.s.Name, h.m.Confidence)
				if d := firstLine(h.s.Description); d != "" {
					fmt.Fprintf(w, "   %s\n", d)
				}
				if len(h.m.Reasons) > 0 {
					fmt.Fprintf(w, "   Why: %s\n", strings.Join(h.m.Reasons, "; "))
				}
				var ins []string
				for _, in := range h.s.Workflow.Inputs {
					r := "optional"
					if in.IsRequired() {
						r = "required"
					}
					t := in.Type
					if t == "" {
						t = "any"
					}
					ins = append(ins, fmt.Sprintf("%s (%s, %s)", in.Name, t, r))
				}
				if len(ins) > 0 {
					fmt.Fprintf(w, "   Inputs: %s\n", strings.Join(ins, ", "))
				}
				fmt.Fprintf(w, "   Run: %s\n", app.SavedExampleCommand(h.s.Name, h.s.Workflow))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print matches as JSON")
	fl.IntVar(&limit, "limit", 5, "maximum number of matches")
	fl.BoolVar(&useLLM, "llm", false, "let the configured LLM rerank the top candidates (needs an API key)")
	return cmd
}

func newWorkflowGraphCmd(f *Factory) *cobra.Command {
	var fence bool
	cmd := &cobra.Command{
		Use:   "graph <name|file>",
		Short: "Print a workflow's step graph as a Mermaid flowchart",
		Long: `Prints the steps of a saved workflow or a .pflow.md / JSON file as a Mermaid
flowchart: inputs and the steps that read them, each step with its node type,
action edges labelled (error, ...), batch steps with what they run over, nested
workflows, and the outputs. GitHub renders it inside a ` + "```mermaid" + ` block
(--markdown prints one).`,
		Example: `  pflow workflow graph release-notes
  pflow workflow graph --markdown ./flow.pflow.md > flow.graph.md`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkflowNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := f.App.ResolveTarget(args[0])
			if err != nil {
				return err
			}
			g := workflow.Mermaid(t.Workflow)
			if fence {
				g = "```mermaid\n" + g + "```\n"
			}
			_, err = io.WriteString(f.IO.Out, g)
			return err
		},
	}
	cmd.Flags().BoolVar(&fence, "markdown", false, "wrap the graph in a ```mermaid block")
	return cmd
}

// inputSummary is an input as the CLI lists it: "name (type, required)".
func inputSummary(in *workflow.Input) string {
	req := "optional"
	if in.IsRequired() {
		req = "required"
	}
	typ := in.Type
	if typ == "" {
		typ = "any"
	}
	return fmt.Sprintf("%s (%s, %s)", in.Name, typ, req)
}
