package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/value"
)

// newMCPCmd is the 'pflow mcp' command group.
func newMCPCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP servers whose tools become workflow nodes, or serve pflow over MCP",
	}
	cmd.AddCommand(
		newMCPAddCmd(f),
		newMCPListCmd(f),
		newMCPRemoveCmd(f),
		newMCPSyncCmd(f),
		newMCPToolsCmd(f),
		newMCPInfoCmd(f),
		newMCPTestCmd(f),
		newMCPLoginCmd(f),
		newMCPLogoutCmd(f),
	)
	addMCPServeCmd(cmd, f)
	return cmd
}

func writeMCPJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func newMCPAddCmd(f *Factory) *cobra.Command {
	var insecure bool
	cmd := &cobra.Command{
		Use:   "add <config-file|json>...",
		Short: "Add or update MCP servers from config files or inline JSON (the mcpServers format of Claude Desktop, Claude Code and Cursor)",
		Example: `  pflow mcp add ~/Library/Application\ Support/Claude/claude_desktop_config.json
  pflow mcp add .cursor/mcp.json
  pflow mcp add '{"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}'
  pflow mcp add '{"remote": {"type": "http", "url": "https://example.com/mcp", "auth": {"type": "bearer", "token": "${API_TOKEN}"}}}'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := f.App.AddMCPServers(cmd.Context(), args, app.MCPAddOptions{Insecure: insecure})
			if err != nil {
				return err
			}
			out := f.IO.Out
			total := 0
			for _, r := range res {
				for _, n := range r.Notes {
					fmt.Fprintf(f.IO.ErrOut, "Note: %s\n", n)
				}
				if len(r.Servers) == 0 {
					fmt.Fprintf(out, "⚠ No servers found in %s\n", r.Source)
					continue
				}
				fmt.Fprintf(out, "✓ Added/updated %d server(s) from %s:\n", len(r.Servers), r.Source)
				for _, s := range r.Servers {
					fmt.Fprintf(out, "  - %s\n", s)
				}
				total += len(r.Servers)
			}
			if total == 0 {
				fmt.Fprintln(out, "No servers were added.")
				return nil
			}
			fmt.Fprintf(out, "\nSuccessfully configured %d MCP server(s).\n", total)
			fmt.Fprintln(out, "Run 'pflow mcp sync --all' to discover available tools from all servers.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&insecure, "insecure", false, "allow plain http:// to a remote host for the http/sse servers added (stored as \"insecure\": true)")
	return cmd
}

func newMCPListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List configured MCP servers (secrets masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			servers, err := f.App.MCPServers()
			if err != nil {
				return err
			}
			if asJSON {
				return writeMCPJSON(f.IO.Out, servers)
			}
			out := f.IO.Out
			if len(servers) == 0 {
				fmt.Fprintln(out, "No MCP servers configured.")
				fmt.Fprintln(out, `Add one with: pflow mcp add '{"name": {"command": "npx", "args": ["-y", "package"]}}'`)
				return nil
			}
			fmt.Fprintln(out, "Configured MCP servers:")
			for _, name := range value.SortedKeys(servers) {
				c := servers[name]
				if mcpclient.DecodeConfig(c).Disabled {
					fmt.Fprintf(out, "\n  %s: (disabled: not synced or started)\n", name)
				} else {
					fmt.Fprintf(out, "\n  %s:\n", name)
				}
				tr, _ := c["type"].(string)
				if tr == "" {
					tr = "stdio"
				}
				fmt.Fprintf(out, "    Transport: %s\n", tr)
				if tr == "stdio" {
					parts := []string{value.Stringify(c["command"])}
					if a, ok := c["args"].([]any); ok {
						for _, x := range a {
							parts = append(parts, value.Stringify(x))
						}
					}
					fmt.Fprintf(out, "    Command: %s\n", strings.TrimRight(strings.Join(parts, " "), " "))
				} else if tr == "uds" {
					fmt.Fprintf(out, "    Socket: %s\n", value.Stringify(c["path"]))
				} else {
					fmt.Fprintf(out, "    URL: %s\n", value.Stringify(c["url"]))
					if a, ok := c["auth"].(map[string]any); ok {
						fmt.Fprintf(out, "    Auth Type: %s\n", value.Stringify(a["type"]))
					} else if state := f.App.MCPAuthState(name); state != "" {
						fmt.Fprintf(out, "    Sign-in: %s\n", state)
					} else {
						fmt.Fprintf(out, "    Sign-in: none (if the server asks for one: pflow mcp login %s)\n", name)
					}
					if h, ok := c["headers"].(map[string]any); ok && len(h) > 0 {
						fmt.Fprintf(out, "    Headers: %s\n", kvList(h))
					}
				}
				if t, ok := c["timeout"]; ok {
					fmt.Fprintf(out, "    Timeout: %ss\n", value.Stringify(t))
				}
				if e, ok := c["env"].(map[string]any); ok && len(e) > 0 {
					fmt.Fprintf(out, "    Environment: %s\n", kvList(e))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func kvList(m map[string]any) string {
	parts := make([]string, 0, len(m))
	for _, k := range value.SortedKeys(m) {
		parts = append(parts, k+"="+value.Stringify(m[k]))
	}
	return strings.Join(parts, ", ")
}

func newMCPLoginCmd(f *Factory) *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login <server>",
		Short: "Sign in to a remote MCP server (OAuth) once; runs then use and refresh the token",
		Long: `Signs in to a remote (streamable HTTP) MCP server that asks for OAuth: pflow discovers the
server's authorization server, registers itself (or uses "oauth": {"client_id", "client_secret"}
from the server's config), prints the sign-in URL and opens it in a browser when one is
available, and waits for the redirect to a one-off address on 127.0.0.1. The token is stored
in $PFLOW_HOME/oauth/<server>.json (mode 0600), refreshed automatically, and never printed.
Scopes listed in "oauth": {"scopes": [...]} are requested and must be granted.

Runs, pflow mcp sync and pflow mcp serve never open a browser: a server that needs a sign-in
pflow does not have fails at once, naming this command.`,
		Example: `  pflow mcp login linear
  pflow mcp login linear --no-browser   # only print the URL`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := mcpclient.LoginOptions{Out: f.IO.ErrOut}
			if !noBrowser {
				o.Open = openBrowser
			}
			r, err := f.App.MCPLogin(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			msg := fmt.Sprintf("✓ Signed in to %s", r.Server)
			if len(r.Scopes) > 0 {
				msg += " (scopes: " + strings.Join(r.Scopes, " ") + ")"
			}
			fmt.Fprintln(f.IO.Out, f.IO.OutStyle().Success(msg))
			if !r.ExpiresAt.IsZero() {
				how := "it is refreshed automatically"
				if !r.Refresh {
					how = "no refresh token was granted: sign in again then"
				}
				fmt.Fprintf(f.IO.Out, "  The token expires at %s; %s.\n", r.ExpiresAt.Local().Format("2006-01-02 15:04"), how)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the sign-in URL (also the default when no browser can be opened)")
	return cmd
}

func newMCPLogoutCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "logout <server>",
		Short: "Forget a remote MCP server's stored sign-in",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			had, err := f.App.MCPLogout(args[0])
			if err != nil {
				return err
			}
			if !had {
				fmt.Fprintf(f.IO.Out, "Not signed in to %s: nothing to forget.\n", args[0])
				return nil
			}
			fmt.Fprintf(f.IO.Out, "✓ Signed out of %s (its stored token is deleted)\n", args[0])
			return nil
		},
	}
}

// openBrowser opens url with the system's opener when a desktop session
// seems to be there; an error means "print it and let the person open it".
func openBrowser(url string) error {
	var name string
	switch {
	case os.Getenv("BROWSER") != "":
		name = os.Getenv("BROWSER")
	case goruntime.GOOS == "darwin":
		name = "open"
	case os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "":
		name = "xdg-open"
	default:
		return errors.New("no desktop session")
	}
	cmd := exec.Command(name, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

func newMCPRemoveCmd(f *Factory) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "remove <name>",
		Short: "Remove an MCP server and exactly its registered tools",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			servers, err := f.App.MCPServers()
			if err != nil {
				return err
			}
			if _, ok := servers[name]; !ok {
				return app.MCPServerNotFound(value.SortedKeys(servers), name)
			}
			tools, _ := f.App.MCPTools(name)
			prompt := fmt.Sprintf("Remove server '%s'?", name)
			if len(tools) > 0 {
				prompt += fmt.Sprintf(" This will also remove %d registered tools.", len(tools))
			}
			if err := confirm(f, force, prompt, "pflow mcp remove "+name); err != nil {
				return err
			}
			n, err := f.App.RemoveMCPServer(cmd.Context(), name)
			if err != nil {
				return err
			}
			if n > 0 {
				fmt.Fprintf(f.IO.Out, "  Removed %d tools from registry\n", n)
			}
			fmt.Fprintf(f.IO.Out, "✓ Removed MCP server '%s'\n", name)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&force, "yes", "y", false, "remove without asking (required when there is no terminal to ask on)")
	cmd.Flags().BoolVarP(&force, "force", "f", false, "same as --yes")
	_ = cmd.Flags().MarkHidden("force")
	return cmd
}

func newMCPSyncCmd(f *Factory) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "sync [name...] [--all]",
		Short: "Discover the tools of MCP servers and register each as a node mcp-<server>-<tool>",
		RunE: func(cmd *cobra.Command, args []string) error {
			out := f.IO.Out
			single := len(args) == 1 && !all
			progress := func(ev app.MCPSyncEvent) {
				if asJSON {
					return
				}
				if !ev.Done {
					switch {
					case single:
						fmt.Fprintf(out, "Syncing server '%s'...\n", ev.Server)
					case ev.Index == 0:
						fmt.Fprintf(out, "Syncing %d servers...\n", ev.Total)
					}
					if !single && f.IO.ErrTTY {
						fmt.Fprintf(f.IO.ErrOut, "  [%d/%d] %s...\r", ev.Index+1, ev.Total, ev.Server)
					}
					return
				}
				if single {
					return
				}
				if f.IO.ErrTTY {
					fmt.Fprintf(f.IO.ErrOut, "\r\033[K")
				}
				if r := ev.Result; r.Skipped != "" {
					fmt.Fprintf(out, "  - %s: skipped (%s)\n", r.Server, r.Skipped)
				} else if r.Error != "" {
					fmt.Fprintf(f.IO.ErrOut, "  ✗ %s: %s\n", r.Server, indentRest(r.Error, "    "))
				} else {
					fmt.Fprintf(out, "  ✓ %s: %d discovered, %d registered\n", r.Server, r.Discovered, r.Registered)
				}
			}
			res, err := f.App.SyncMCP(cmd.Context(), args, all, progress)
			if asJSON && res != nil {
				if werr := writeMCPJSON(out, map[string]any{"servers": res}); werr != nil {
					return werr
				}
				if err != nil {
					return silentExit(1)
				}
				return nil
			}
			if err != nil {
				return err
			}
			if single {
				r := res[0]
				if r.Protocol != "" {
					fmt.Fprintf(out, "✓ Discovered %d tools (MCP %s)\n", r.Discovered, r.Protocol)
				} else {
					fmt.Fprintf(out, "✓ Discovered %d tools\n", r.Discovered)
				}
				fmt.Fprintf(out, "✓ Registered %d tools in pflow registry\n", r.Registered)
				if r.Removed > 0 {
					fmt.Fprintf(out, "✓ Removed %d tools the server no longer has\n", r.Removed)
				}
				if len(r.Changed) > 0 || len(r.RemovedNodes) > 0 || (len(r.Added) > 0 && len(r.Added) < len(r.Nodes)) {
					// Drift since the last sync: say what, so saved workflows
					// can be checked (pflow registry validate --all).
					fmt.Fprintln(out, "\nChanged since the last sync:")
					for _, n := range r.Added {
						fmt.Fprintf(out, "  + %s (new)\n", n)
					}
					for _, n := range r.Changed {
						fmt.Fprintf(out, "  ~ %s (its parameters changed)\n", n)
					}
					for _, n := range r.RemovedNodes {
						fmt.Fprintf(out, "  - %s (gone)\n", n)
					}
					fmt.Fprintln(out, "Check the saved workflows against it: pflow registry validate --all")
				}
				if len(r.Nodes) > 0 {
					fmt.Fprintln(out, "\nRegistered tools:")
					for i, n := range r.Nodes {
						if i == 10 {
							fmt.Fprintf(out, "  ... and %d more\n", len(r.Nodes)-10)
							break
						}
						fmt.Fprintf(out, "  - %s\n", n)
					}
				}
				return nil
			}
			d, r := 0, 0
			failed := 0
			for _, x := range res {
				d += x.Discovered
				r += x.Registered
				if x.Error != "" {
					failed++
				}
			}
			fmt.Fprintf(out, "\nTotal: %d tools discovered, %d registered\n", d, r)
			if failed > 0 {
				return silentExit(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "sync every configured server")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func paramKeys(fields []node.Field) string {
	keys := make([]string, 0, len(fields))
	for _, p := range fields {
		keys = append(keys, p.Key)
	}
	return strings.Join(keys, ", ")
}

func newMCPToolsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [server]",
		Short: "List the registered tools of one or every MCP server",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server := ""
			if len(args) == 1 {
				server = args[0]
			}
			tools, err := f.App.MCPTools(server)
			if err != nil {
				return err
			}
			if asJSON {
				if tools == nil {
					tools = []app.MCPTool{}
				}
				return writeMCPJSON(f.IO.Out, tools)
			}
			out := f.IO.Out
			if server != "" {
				if len(tools) == 0 {
					fmt.Fprintf(out, "No tools registered for server '%s'\n", server)
					fmt.Fprintf(out, "Run 'pflow mcp sync %s' to discover tools\n", server)
					return nil
				}
				fmt.Fprintf(out, "Registered tools for '%s':\n", server)
				for _, t := range tools {
					fmt.Fprintf(out, "\n  %s:\n    %s\n", t.Node, t.Description)
					if len(t.Params) > 0 {
						fmt.Fprintf(out, "    Parameters: %s\n", paramKeys(t.Params))
					}
				}
				return nil
			}
			if len(tools) == 0 {
				fmt.Fprintln(out, "No MCP tools registered")
				fmt.Fprintln(out, "Run 'pflow mcp sync --all' to discover tools")
				return nil
			}
			by := map[string][]app.MCPTool{}
			for _, t := range tools {
				by[t.Server] = append(by[t.Server], t)
			}
			servers := value.SortedKeys(by)
			fmt.Fprintln(out, "Registered MCP tools:")
			for _, s := range servers {
				fmt.Fprintf(out, "\n  %s (%d tools):\n", s, len(by[s]))
				for i, t := range by[s] {
					if i == 5 {
						fmt.Fprintf(out, "    ... and %d more (pflow mcp tools %s)\n", len(by[s])-5, s)
						break
					}
					fmt.Fprintf(out, "    - %s: %s\n", t.Node, cut(firstLine(t.Description), 60))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newMCPInfoCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info <node-type>",
		Short: "Describe a registered MCP tool: params, outputs and how to use it in a workflow",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := f.App.MCPToolInfo(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeMCPJSON(f.IO.Out, t)
			}
			out := f.IO.Out
			fmt.Fprintf(out, "Tool: %s\nServer: %s\nTool Name: %s\nDescription: %s\n", t.Node, t.Server, t.Tool, t.Description)
			if t.Protocol != "" {
				fmt.Fprintf(out, "Protocol: MCP %s (at the last sync)\n", t.Protocol)
			}
			if len(t.Params) == 0 {
				fmt.Fprintln(out, "\nParameters: None")
			} else {
				fmt.Fprintln(out, "\nParameters:")
				for _, p := range t.Params {
					line := fmt.Sprintf("  - %s: %s", p.Key, p.Type)
					if p.Required {
						line += " (required)"
					}
					if p.Description != "" {
						line += " - " + p.Description
					}
					if len(p.Enum) > 0 {
						opts := make([]string, len(p.Enum))
						for i, e := range p.Enum {
							opts[i] = value.Stringify(e)
						}
						line += " [one of: " + strings.Join(opts, ", ") + "]"
					}
					fmt.Fprintln(out, line)
				}
			}
			fmt.Fprintln(out, "\nOutputs:")
			for _, o := range t.Outputs {
				line := fmt.Sprintf("  - %s: %s", o.Key, o.Type)
				if o.Description != "" {
					line += " - " + o.Description
				}
				fmt.Fprintln(out, line)
			}
			// The same snippet as `registry describe` (one generator): it
			// passes --validate-only and runs.
			spec := &node.Spec{Type: t.Node, Interface: node.Interface{Description: t.Description, Params: t.Params, Outputs: t.Outputs}}
			fmt.Fprint(out, "\nUsage in .pflow.md:\n\n")
			for _, l := range strings.SplitAfter(strings.TrimRight(registry.UsageSnippet(spec), "\n"), "\n") {
				fmt.Fprint(out, "    "+l)
			}
			fmt.Fprintln(out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newMCPTestCmd(f *Factory) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "test <server>... | --all",
		Short: "Check that MCP servers start and answer: connect, initialize, list tools, with the time it took and any problem",
		Long: `Connects to each server, initializes, lists its tools and closes, then reports
the time that took, the protocol version, the number of tools and how they
differ from the registry (tools added or gone since the last sync). Nothing is
written; a server that fails is reported with the reason and the fix.`,
		Example: `  pflow mcp test --all
  pflow mcp test github --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := f.App.TestMCPServers(cmd.Context(), args, all)
			if err != nil {
				return err
			}
			failed := 0
			for _, r := range res {
				if !r.OK && r.Skipped == "" {
					failed++
				}
			}
			if asJSON {
				if err := writeMCPJSON(f.IO.Out, map[string]any{"servers": res}); err != nil {
					return err
				}
			} else {
				out, st := f.IO.Out, f.IO.OutStyle()
				for _, r := range res {
					switch {
					case r.Skipped != "":
						fmt.Fprintf(out, "- %s: skipped (%s)\n", r.Server, r.Skipped)
					case r.OK:
						fmt.Fprintf(out, "%s %s: %d tools in %s (%s, protocol %s)\n", st.Success("✓"), r.Server, r.Tools, fmtMS(r.LatencyMS), r.Transport, r.Protocol)
						if len(r.Added)+len(r.Removed) > 0 {
							fmt.Fprintf(out, "    the registry is behind: %d new, %d gone; run pflow mcp sync %s\n", len(r.Added), len(r.Removed), r.Server)
						}
					default:
						fmt.Fprintf(out, "%s %s: %s\n", st.Failure("✗"), r.Server, indentRest(r.Error, "    "))
					}
				}
			}
			if failed > 0 {
				return silentExit(pferr.ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "test every configured server")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func fmtMS(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
