package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/value"
)

// newRegistryCmd is the 'pflow registry' command group.
func newRegistryCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "List, describe, search, discover and try the node types workflows can use",
	}
	cmd.AddCommand(newRegistryListCmd(f), newRegistryDescribeCmd(f), newRegistrySearchCmd(f),
		newRegistryDiscoverCmd(f), newRegistryRunCmd(f), newRegistryValidateCmd(f))
	cmd.AddCommand(newRegistryAliasCmds(f)...)
	return cmd
}

// cut shortens s to at most n bytes, the last three "..." when it was
// longer.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return value.Truncate(s, n-3, "...")
}

func newRegistryListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	var filter string
	cmd := &cobra.Command{
		Use:   "list [keywords...]",
		Short: "List node types grouped by package (core, MCP servers, user); keywords search",
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, _, err := f.App.Catalog(cmd.Context())
			if err != nil {
				return err
			}
			if len(args) > 0 {
				return renderSearch(f.IO.Out, cat, args, asJSON)
			}
			if filter != "" {
				g := cat.GroupFiltered(filter)
				var specs []*node.Spec
				for _, l := range g.Core {
					specs = append(specs, l...)
				}
				for _, l := range g.MCP {
					specs = append(specs, l...)
				}
				specs = append(specs, g.User...)
				if len(specs) == 0 {
					return pferr.Newf(pferr.NotFound, "No node type matches %q", filter).
						WithHint("Try fewer or other words, or 'pflow registry list' for all of them.")
				}
				cat = registry.NewCatalog(specs)
			}
			if asJSON {
				nodes := []nodeBriefJSON{}
				for _, s := range cat.Specs() {
					nodes = append(nodes, nodeBriefJSON{Name: s.Type, Type: registry.TypeOf(s), Group: registry.GroupOf(s), Description: s.Interface.Description})
				}
				return writeJSON(f.IO.Out, map[string]any{"nodes": nodes})
			}
			bw := bufio.NewWriter(f.IO.Out) // one write, not one per node
			renderGrouped(bw, cat)
			return bw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().StringVar(&filter, "filter", "", "only node types whose name, package or server, or description contain every word of this text")
	return cmd
}

func renderGrouped(w io.Writer, cat *registry.Catalog) {
	g := cat.Group()
	line := func(s *node.Spec) {
		fmt.Fprintf(w, "  %-25s %s\n", s.Type, cut(firstLine(s.Interface.Description), 75))
	}
	fmt.Fprintln(w, "Core Packages:")
	fmt.Fprintln(w, "─────────────")
	core := 0
	for _, pkg := range value.SortedKeys(g.Core) {
		specs := g.Core[pkg]
		core += len(specs)
		fmt.Fprintf(w, "\n%s (%d %s)\n", pkg, len(specs), plural(len(specs), "node", "nodes"))
		for _, s := range specs {
			line(s)
		}
	}
	mcp := 0
	fmt.Fprintln(w, "\nMCP Servers:")
	fmt.Fprintln(w, "────────────")
	if len(g.MCP) == 0 {
		fmt.Fprintln(w, "  (none — add a server with 'pflow mcp add', then 'pflow mcp sync')")
	}
	for _, srv := range value.SortedKeys(g.MCP) {
		specs := g.MCP[srv]
		mcp += len(specs)
		fmt.Fprintf(w, "\n%s (%d %s)\n", srv, len(specs), plural(len(specs), "tool", "tools"))
		for _, s := range specs {
			line(s)
		}
	}
	fmt.Fprintln(w, "\nUser Nodes:")
	fmt.Fprintln(w, "───────────")
	if len(g.User) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, s := range g.User {
		line(s)
	}
	fmt.Fprintf(w, "\nSummary: %d core, %d MCP, %d user nodes\n", core, mcp, len(g.User))
	if d := cat.Denied(); len(d) > 0 {
		fmt.Fprintf(w, "Hidden by settings: %s (see 'pflow settings check <node>')\n", strings.Join(d, ", "))
	}
}

func renderSearch(w io.Writer, cat *registry.Catalog, kws []string, asJSON bool) error {
	rs := cat.Search(kws)
	q := strings.Join(kws, " ")
	if asJSON {
		out := []searchHitJSON{}
		for _, r := range rs {
			out = append(out, searchHitJSON{Name: r.Spec.Type, Type: registry.TypeOf(r.Spec), Score: r.Score, Match: r.Match, Description: r.Spec.Interface.Description})
		}
		return writeJSON(w, map[string]any{"query": q, "results": out})
	}
	if len(rs) == 0 {
		fmt.Fprintf(w, "No nodes found matching '%s'\n", q)
		fmt.Fprintln(w, "  Try fewer or broader words, or 'pflow registry discover \"<task>\"' to search by meaning.")
		return nil
	}
	fmt.Fprintf(w, "Found %d %s matching '%s':\n\n", len(rs), plural(len(rs), "node", "nodes"), q)
	fmt.Fprintf(w, "%-30s %-5s %-7s %s\n", "Name", "Type", "Match", "Description")
	fmt.Fprintf(w, "%-30s %-5s %-7s %s\n", strings.Repeat("─", 30), "─────", "───────", strings.Repeat("─", 35))
	for i, r := range rs {
		if i == 10 {
			fmt.Fprintf(w, "... and %d more results\n", len(rs)-10)
			break
		}
		fmt.Fprintf(w, "%-30s %-5s %-7s %s\n", r.Spec.Type, registry.TypeOf(r.Spec), r.Match, cut(firstLine(r.Spec.Interface.Description), 35))
	}
	return nil
}

func newRegistrySearchCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search <keywords...>",
		Short: "Search node types by name and description (all keywords must match; ranked)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, _, err := f.App.Catalog(cmd.Context())
			if err != nil {
				return err
			}
			return renderSearch(f.IO.Out, cat, args, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newRegistryDescribeCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe <node...>",
		Short: "Show node interfaces (params, outputs, nested paths) with a .pflow.md usage snippet",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			specs, err := f.App.DescribeNodes(cmd.Context(), args)
			if err != nil {
				return err
			}
			if asJSON {
				out := []nodeSpecJSON{}
				for _, s := range specs {
					out = append(out, specJSON(s))
				}
				return writeJSON(f.IO.Out, map[string]any{"nodes": out})
			}
			fmt.Fprintln(f.IO.Out, "## Selected Components")
			for _, s := range specs {
				fmt.Fprintln(f.IO.Out)
				fmt.Fprint(f.IO.Out, registry.Describe(s))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newRegistryDiscoverCmd(f *Factory) *cobra.Command {
	var asJSON, useLLM bool
	var limit int
	cmd := &cobra.Command{
		Use:   `discover "<task description>"`,
		Short: "Find the node types for a task (offline ranking; --llm reranks)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.Join(args, " ")
			ms, err := f.App.DiscoverNodeTypes(cmd.Context(), query, limit, useLLM)
			if err != nil {
				return err
			}
			if asJSON {
				out := []nodeSpecJSON{}
				for _, m := range ms {
					j := specJSON(m.Spec)
					conf, reasons := m.Confidence, nonNil(m.Reasons)
					j.Confidence, j.Reasons = &conf, &reasons
					out = append(out, j)
				}
				return writeJSON(f.IO.Out, map[string]any{"query": query, "matches": out})
			}
			w := f.IO.Out
			if len(ms) == 0 {
				fmt.Fprintf(w, "No node type matches %q.\n", query)
				fmt.Fprintln(w, "  Run 'pflow registry list' to see every node, or add an MCP server that has the tool ('pflow mcp add').")
				return nil
			}
			fmt.Fprintf(w, "Nodes for %q:\n\n", query)
			for i, m := range ms {
				fmt.Fprintf(w, "%d. %-30s confidence %.2f  — %s\n", i+1, m.Spec.Type, m.Confidence, strings.Join(m.Reasons, "; "))
			}
			fmt.Fprintln(w, "\n## Selected Components")
			for i, m := range ms {
				if i == 3 {
					break
				}
				fmt.Fprintln(w)
				fmt.Fprint(w, registry.Describe(m.Spec))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.IntVar(&limit, "limit", 8, "maximum number of matches")
	fl.BoolVar(&useLLM, "llm", false, "let the configured LLM rerank the top candidates (needs an API key)")
	return cmd
}

func newRegistryRunCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "run <node> [key=value...|--param=value...]",
		Short: "Run one node on its own and show its outputs and every template path they offer",
		Long: `Runs one node on its own, as 'pflow <node>' does, and shows its whole output with
every template path it offers. Params are key=value or --key=value, read by the
node's schema ('@file' reads a file). This form always means the node, also when a
saved workflow has the same name.`,
		Example: `  pflow registry run shell command='echo {"a":[1,2]}'
  pflow registry run http --url=https://api.github.com/repos/cli/cli`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flags after the node are its params; --json stays pflow's
			// own unless the node declares a param json.
			args, asJSON = takeJSONFlag(cmd.Context(), f, args, asJSON)
			err := registryRun(cmd, f, args, asJSON)
			if err != nil && asJSON {
				return renderJSONError(f.IO.Out, err)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// takeJSONFlag removes --json from a node's arguments when the node has no
// param of that name (it then means registry run's own flag).
func takeJSONFlag(ctx context.Context, f *Factory, args []string, asJSON bool) ([]string, bool) {
	if len(args) < 2 || !slices.Contains(args[1:], "--json") {
		return args, asJSON
	}
	if cat, _, err := f.App.Catalog(ctx); err == nil {
		if s, err := app.LookupNodeType(cat, args[0]); err == nil {
			if _, ok := s.Interface.Param("json"); ok {
				return args, asJSON
			}
		}
	}
	out := []string{args[0]}
	for _, a := range args[1:] {
		if a != "--json" {
			out = append(out, a)
		}
	}
	return out, true
}

func registryRun(cmd *cobra.Command, f *Factory, args []string, asJSON bool) error {
	ctx := cmd.Context()
	cat, st, err := f.App.Catalog(ctx)
	if err != nil {
		return err
	}
	spec, err := app.LookupNodeType(cat, args[0])
	if err != nil {
		return err
	}
	params, err := app.ParseNodeArgs(spec, args[1:])
	if err != nil {
		return err
	}
	start := time.Now()
	tr, err := f.App.TryNode(ctx, spec.Type, params, app.PathPolicy{}, "")
	if err != nil {
		return err
	}
	d := tr.Duration
	if d == 0 {
		d = time.Since(start)
	}
	if asJSON {
		return writeJSON(f.IO.Out, map[string]any{"success": true, "node_type": tr.NodeType, "outputs": tr.Outputs,
			"paths": tr.Paths, "execution_time_ms": d.Milliseconds()})
	}
	// settings registry.output_mode: smart (values cut short, the default),
	// structure (paths and types only), full (whole values).
	mode := st.Registry.OutputMode
	w := f.IO.Out
	fmt.Fprintln(w, "✓ Node executed successfully")
	if mode != settings.OutputStructure {
		fmt.Fprintln(w, "\nOutput:")
		keys := value.SortedKeys(tr.Outputs)
		limit := 200
		if mode == settings.OutputFull {
			limit = 1 << 30
		}
		for _, k := range keys {
			fmt.Fprintf(w, "  %s = %s\n", k, value.Preview(tr.Outputs[k], limit))
		}
	}
	fmt.Fprintln(w, "\nTemplate paths:")
	for _, p := range tr.Paths {
		fmt.Fprintf(w, "  ${%s.%s} (%s)", tr.NodeType, p.Path, p.Type)
		if p.Example != nil && mode != settings.OutputStructure {
			fmt.Fprintf(w, " = %s", value.Preview(p.Example, 60))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nExecution time: %s\n", fmtDur(d))
	return nil
}

func newRegistryValidateCmd(f *Factory) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "validate [workflow...] | --all",
		Short: "Check saved workflows against the node types registered now (e.g. after an MCP sync)",
		Long: `Runs every static check of 'pflow --validate-only' on each saved workflow (the
named ones, or all with --all) against the registry as it is now: a tool an MCP
server removed, renamed or changed since the workflow was saved shows up here
instead of at run time. Exits 1 when any workflow is invalid.`,
		Example: `  pflow mcp sync --all && pflow registry validate --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !all {
				return pferr.New(pferr.Usage, "Name saved workflows or use --all")
			}
			res, err := f.App.ValidateSaved(cmd.Context(), args)
			if err != nil {
				return err
			}
			bad := 0
			for _, r := range res {
				if !r.Valid {
					bad++
				}
			}
			if asJSON {
				if err := writeJSON(f.IO.Out, map[string]any{"workflows": res, "invalid": bad}); err != nil {
					return err
				}
			} else {
				out, st := f.IO.Out, f.IO.OutStyle()
				if len(res) == 0 {
					fmt.Fprintln(out, "No saved workflows.")
				}
				for _, r := range res {
					if r.Valid {
						fmt.Fprintf(out, "%s %s\n", st.Success("✓"), r.Name)
						continue
					}
					fmt.Fprintf(out, "%s %s (%s)\n", st.Failure("✗"), r.Name, r.Path)
					for _, e := range r.Errors {
						fmt.Fprintf(out, "    %s\n", indentRest(e, "      "))
					}
				}
				if len(res) > 0 {
					fmt.Fprintf(out, "\n%d of %d saved workflows are valid\n", len(res)-bad, len(res))
				}
			}
			if bad > 0 {
				return silentExit(pferr.ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "check every saved workflow")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
