package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/registry"
)

// completeFunc is cobra's dynamic completion callback.
type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// addCompletions wires dynamic shell completion into the command tree:
// node types for the registry commands, MCP server names for the mcp
// commands. Saved workflow names (run, workflow describe/delete) are wired
// where those commands are built. cobra's own `pflow completion
// bash|zsh|fish|powershell` prints the scripts; they call the hidden
// `pflow __complete` command, which runs these callbacks.
//
// A command that already has a completion callback keeps it. Completion
// never fails loudly: a broken registry or config simply offers nothing.
func addCompletions(root *cobra.Command, f *Factory) {
	set := func(fn completeFunc, path ...string) {
		cmd := findSub(root, path...)
		if cmd != nil && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = fn
		}
	}
	// Node types.
	set(completeNodeTypes(f, true, false), "registry", "describe")
	set(completeNodeTypes(f, false, false), "registry", "run")
	set(completeNodeTypes(f, false, false), "settings", "check")
	set(completeNodeTypes(f, false, true), "mcp", "info")
	// Server names.
	set(completeServerNames(f, false), "mcp", "remove")
	set(completeServerNames(f, true), "mcp", "sync")
	set(completeServerNames(f, false), "mcp", "tools")
	// Flag values.
	if root.Flags().Lookup("output-format") != nil {
		if _, ok := root.GetFlagCompletionFunc("output-format"); !ok {
			_ = root.RegisterFlagCompletionFunc("output-format", cobra.FixedCompletions(
				[]string{"text\thuman-readable output", "json\tone JSON object on stdout"}, cobra.ShellCompDirectiveNoFileComp))
		}
	}
}

// findSub walks the tree by command names.
func findSub(root *cobra.Command, path ...string) *cobra.Command {
	cmd := root
	for _, name := range path {
		var next *cobra.Command
		for _, c := range cmd.Commands() {
			if c.Name() == name {
				next = c
				break
			}
		}
		if next == nil {
			return nil
		}
		cmd = next
	}
	return cmd
}

// completeNodeTypes offers the usable node types (built-ins and synced MCP
// tools, minus the ones settings deny). many: every argument is a node
// type; otherwise only the first (the rest are key=value params). mcpOnly:
// only mcp-* types.
func completeNodeTypes(f *Factory, many, mcpOnly bool) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if !many && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cat, _, err := f.App.Catalog(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		done := map[string]bool{}
		for _, a := range args {
			done[a] = true
		}
		var out []string
		for _, s := range cat.Specs() {
			t := s.Type
			if done[t] || !strings.HasPrefix(t, toComplete) {
				continue
			}
			if mcpOnly && registry.TypeOf(s) != registry.TypeMCP {
				continue
			}
			out = append(out, t+"\t"+shortDescription(s.Interface.Description))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeServerNames offers the servers configured in mcp-servers.json.
// many: every argument is a server name (mcp sync a b c).
func completeServerNames(f *Factory, many bool) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if !many && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		servers, err := f.App.MCPServers()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		done := map[string]bool{}
		for _, a := range args {
			done[a] = true
		}
		var out []string
		for name := range servers {
			if !done[name] && strings.HasPrefix(name, toComplete) {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// shortDescription is the first sentence of a description, at most 80
// characters: shells show it next to each candidate.
func shortDescription(d string) string {
	d = firstLine(d)
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSuffix(d, ".")
	if r := []rune(d); len(r) > 80 {
		d = string(r[:79]) + "…"
	}
	return d
}
