package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
)

// newSettingsCmd is the 'pflow settings' command group.
func newSettingsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Manage settings.json: API keys and other env values, node allow/deny filters",
		Long: `Settings live in $PFLOW_HOME/settings.json (mode 600).

Node filters: allow and deny hold glob patterns (*, ?, [abc]) matched against a
node's names: its type (git-log), <group>.<type> (git.git-log), the module form
pflow.nodes.<group>.<type>, and for MCP tools <server>.<tool>.
Precedence: the most specific matching pattern wins — an exact name beats any
glob, a glob with more literal characters beats a shorter one — and on a tie
deny wins. So 'pflow settings allow git-log' re-enables one node hidden by the
default deny 'pflow.nodes.git.*'. 'pflow settings check <node>' shows the verdict.`,
	}
	cmd.AddCommand(newSettingsLLMCmd(f), newSettingsRetentionCmd(f))
	cmd.AddCommand(newSettingsShowCmd(f), newSettingsSetEnvCmd(f), newSettingsUnsetEnvCmd(f), newSettingsListEnvCmd(f),
		newSettingsPatternCmd(f, false), newSettingsPatternCmd(f, true), newSettingsRemoveCmd(f), newSettingsCheckCmd(f))
	return cmd
}

func newSettingsShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the settings (env values masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := f.App.Settings()
			if err != nil {
				return err
			}
			data, err := settings.Marshal(st.Masked())
			if err != nil {
				return err
			}
			if asJSON {
				_, err := f.IO.Out.Write(data)
				return err
			}
			fmt.Fprintf(f.IO.Out, "Settings file: %s\n\nCurrent settings:\n%s", f.App.Paths.Settings, data)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print only the (masked) JSON")
	return cmd
}

func newSettingsSetEnvCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "set-env KEY=VALUE | KEY VALUE",
		Short:   "Store an environment value (e.g. an API key) in settings.json",
		Example: "  pflow settings set-env OPENAI_API_KEY=sk-...",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var key, val string
			if len(args) == 2 {
				key, val = args[0], args[1]
			} else {
				var ok bool
				key, val, ok = strings.Cut(args[0], "=")
				if !ok {
					return &pferr.Error{Kind: pferr.Usage, Message: fmt.Sprintf("expected KEY=VALUE, got %q", args[0]),
						Hint: "Example: pflow settings set-env OPENAI_API_KEY=sk-..."}
				}
			}
			replaced, err := f.App.SetSettingsEnv(cmd.Context(), key, val)
			if err != nil {
				return err
			}
			verb := "Set"
			if replaced {
				verb = "Updated"
			}
			fmt.Fprintf(f.IO.Out, "✓ %s environment variable: %s\n   Value: %s\n", verb, key, settings.Mask(val))
			return nil
		},
	}
}

func newSettingsUnsetEnvCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "unset-env KEY",
		Short: "Remove an environment value from settings.json",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found, err := f.App.UnsetSettingsEnv(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !found {
				return &pferr.Error{Kind: pferr.NotFound, Message: "Environment variable not found in settings: " + args[0],
					Hint: "Run 'pflow settings list-env' to see the stored keys."}
			}
			fmt.Fprintf(f.IO.Out, "✓ Removed environment variable: %s\n", args[0])
			return nil
		},
	}
}

func newSettingsListEnvCmd(f *Factory) *cobra.Command {
	var show, asJSON bool
	cmd := &cobra.Command{
		Use:   "list-env",
		Short: "List the environment values in settings.json (masked unless --show-values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := f.App.Settings()
			if err != nil {
				return err
			}
			if !show {
				st = st.Masked()
			}
			w := f.IO.Out
			if show {
				w = unmasked(w) // asked for
			}
			if asJSON {
				return writeJSON(w, map[string]any{"env": st.Env, "masked": !show})
			}
			if len(st.Env) == 0 {
				fmt.Fprintln(w, "No environment variables configured")
				fmt.Fprintln(w, "  Add one with: pflow settings set-env KEY=VALUE")
				return nil
			}
			if show {
				fmt.Fprintln(f.IO.ErrOut, "⚠ Displaying unmasked values")
			}
			fmt.Fprintln(w, "Environment variables:")
			for _, k := range st.EnvKeys() {
				fmt.Fprintf(w, "  %s: %s\n", k, st.Env[k])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&show, "show-values", false, "show the values unmasked")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func printFilter(w io.Writer, fl settings.NodeFilter) {
	q := func(ss []string) string {
		if len(ss) == 0 {
			return "(none)"
		}
		return strings.Join(ss, ", ")
	}
	fmt.Fprintf(w, "\nAllow: %s\nDeny:  %s\n", q(fl.Allow), q(fl.Deny))
}

func newSettingsPatternCmd(f *Factory, deny bool) *cobra.Command {
	kind, other := "allow", "deny"
	short := "Allow nodes matching a glob (an exact name re-enables a node a deny glob hides)"
	if deny {
		kind, other = "deny", "allow"
		short = "Hide nodes matching a glob"
	}
	return &cobra.Command{
		Use:     kind + " <pattern>",
		Short:   short,
		Example: fmt.Sprintf("  pflow settings %s 'mcp-github-*'\n  pflow settings %s git-log", kind, kind),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := f.App.AddNodePattern(cmd.Context(), args[0], deny)
			if err != nil {
				return err
			}
			w := f.IO.Out
			if ch.Changed {
				fmt.Fprintf(w, "✓ Added %s pattern: %s\n", kind, args[0])
			} else {
				fmt.Fprintf(w, "Pattern already exists: %s\n", args[0])
			}
			if ch.RemovedFromOther {
				fmt.Fprintf(w, "✓ Removed the same pattern from the %s list\n", other)
			}
			printFilter(w, ch.Filter)
			return nil
		},
	}
}

func newSettingsRemoveCmd(f *Factory) *cobra.Command {
	var deny, allow bool
	cmd := &cobra.Command{
		Use:   "remove <pattern> [--allow|--deny]",
		Short: "Remove a pattern from the allow list (default) or the deny list",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if deny && allow {
				return &pferr.Error{Kind: pferr.Usage, Message: "use either --allow or --deny, not both"}
			}
			kind := "allow"
			if deny {
				kind = "deny"
			}
			ch, err := f.App.RemoveNodePattern(cmd.Context(), args[0], deny)
			if err != nil {
				return err
			}
			if !ch.Changed {
				return &pferr.Error{Kind: pferr.NotFound, Message: fmt.Sprintf("Pattern not found in %s list: %s", kind, args[0]),
					Hint: "Run 'pflow settings show' to see the lists (use --deny for the deny list)."}
			}
			fmt.Fprintf(f.IO.Out, "✓ Removed %s pattern: %s\n", kind, args[0])
			printFilter(f.IO.Out, ch.Filter)
			return nil
		},
	}
	cmd.Flags().BoolVar(&deny, "deny", false, "remove from the deny list")
	cmd.Flags().BoolVar(&allow, "allow", false, "remove from the allow list (default)")
	return cmd
}

func newSettingsCheckCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check <node>",
		Short: "Show whether the allow/deny filter includes a node, and which pattern decides",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.App.CheckNode(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(f.IO.Out, c)
			}
			w := f.IO.Out
			if c.Allowed {
				fmt.Fprintf(w, "✓ Node '%s' would be INCLUDED\n", c.Node)
			} else {
				fmt.Fprintf(w, "✗ Node '%s' would be EXCLUDED\n", c.Node)
			}
			if !c.Known {
				fmt.Fprintln(w, "  (not a known node type; evaluated by its name only)")
			}
			fmt.Fprintf(w, "  Reason: %s\n", c.Reason)
			var al, de []string
			for _, m := range c.Matches {
				if m.Deny {
					de = append(de, m.Pattern)
				} else {
					al = append(al, m.Pattern)
				}
			}
			if len(al) > 0 {
				fmt.Fprintf(w, "  Matched allow patterns: %s\n", strings.Join(al, ", "))
			}
			if len(de) > 0 {
				fmt.Fprintf(w, "  Matched deny patterns: %s\n", strings.Join(de, ", "))
			}
			fmt.Fprintf(w, "  Names checked: %s\n", strings.Join(c.Candidates, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// newSettingsLLMCmd is 'pflow settings llm': which models llm steps and
// LLM reranking use when a workflow does not name one.
func newSettingsLLMCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "llm",
		Short: "Set the default model for llm steps (and for discover --llm)",
	}
	set := func(use, role, short string) *cobra.Command {
		return &cobra.Command{
			Use: use + " MODEL", Short: short, Args: cobra.ExactArgs(1),
			Example: "  pflow settings llm " + use + " anthropic/claude-sonnet-4-5\n  pflow settings llm " + use + " openai/gpt-5.2",
			RunE: func(cmd *cobra.Command, args []string) error {
				if _, err := f.App.SetLLMModel(cmd.Context(), role, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "✓ Set %s model: %s\n", role, args[0])
				return nil
			},
		}
	}
	unset := &cobra.Command{
		Use: "unset default|discovery", Short: "Clear a model setting", Args: cobra.ExactArgs(1),
		ValidArgs: []string{app.ModelDefault, app.ModelDiscovery},
		RunE: func(cmd *cobra.Command, args []string) error {
			prev, err := f.App.SetLLMModel(cmd.Context(), args[0], "")
			if err != nil {
				return err
			}
			if prev == "" {
				fmt.Fprintf(f.IO.Out, "The %s model was not set.\n", args[0])
				return nil
			}
			fmt.Fprintf(f.IO.Out, "✓ Cleared %s model (was %s)\n", args[0], prev)
			return nil
		},
	}
	cmd.AddCommand(set("set-default", app.ModelDefault, "Model for llm steps that do not set 'model'"),
		set("set-discovery", app.ModelDiscovery, "Model for 'workflow discover --llm' and 'registry discover --llm'"), unset)
	return cmd
}

// newSettingsRetentionCmd is 'pflow settings retention': how many traces
// $PFLOW_HOME/debug/ keeps.
func newSettingsRetentionCmd(f *Factory) *cobra.Command {
	var maxCount, maxAgeDays int
	cmd := &cobra.Command{
		Use:   "retention [--max-count N] [--max-age-days N]",
		Short: "Show or set how many traces pflow keeps (0: no limit)",
		Long: `Each run writes a trace to $PFLOW_HOME/debug/. When a new trace is written,
pflow removes the oldest beyond --max-count and those older than
--max-age-days. 0 means no limit. Without flags, shows the current setting.`,
		Example: "  pflow settings retention\n  pflow settings retention --max-count 500 --max-age-days 0",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var r settings.Retention
			if !cmd.Flags().Changed("max-count") && !cmd.Flags().Changed("max-age-days") {
				st, err := f.App.Settings()
				if err != nil {
					return err
				}
				r = st.Retention
			} else {
				var mc, ma *int
				if cmd.Flags().Changed("max-count") {
					mc = &maxCount
				}
				if cmd.Flags().Changed("max-age-days") {
					ma = &maxAgeDays
				}
				var err error
				if r, err = f.App.SetRetention(cmd.Context(), mc, ma); err != nil {
					return err
				}
				fmt.Fprint(f.IO.Out, "✓ Updated retention\n")
			}
			limit := func(n int, unit string) string {
				if n == 0 {
					return "no limit"
				}
				return fmt.Sprintf("%d %s", n, unit)
			}
			fmt.Fprintf(f.IO.Out, "Traces kept in %s:\n  newest: %s\n  age:    %s\n", f.App.Paths.Debug,
				limit(r.MaxCount, "runs"), limit(r.MaxAgeDays, "days"))
			return nil
		},
	}
	cmd.Flags().IntVar(&maxCount, "max-count", 0, "keep the newest N traces (0: no limit)")
	cmd.Flags().IntVar(&maxAgeDays, "max-age-days", 0, "remove traces older than N days (0: no limit)")
	return cmd
}
