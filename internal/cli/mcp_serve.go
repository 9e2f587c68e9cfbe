package cli

import (
	"time"

	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/mcpclient"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/gctune"
	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/mcpserver"
	"github.com/pflow-go/pflow/internal/pferr"
)

// addMCPServeCmd adds 'pflow mcp serve' to the mcp group.
func addMCPServeCmd(mcpCmd *cobra.Command, f *Factory) { mcpCmd.AddCommand(newMCPServeCmd(f)) }

// newMCPServeCmd is 'pflow mcp serve' (also spelled 'pflow serve mcp').
func newMCPServeCmd(f *Factory) *cobra.Command {
	var (
		httpAddr  string
		token     string
		noAuth    bool
		allowDirs []string
		idle      time.Duration
		wfTools   bool
		workflows []string
		noBuilder bool
		t         app.TemporalRequest
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve pflow's workflow tools over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve pflow as an MCP server, so an agent without a shell can discover, validate, run and
save workflows through 16 tools (workflow_discover, workflow_execute, workflow_save, ...) and read
the agent guide at pflow://instructions.

By default the server speaks MCP on stdin/stdout (what Claude Desktop, Claude Code and Cursor
launch); logs go to stderr. With --http it serves streamable HTTP at http://ADDR/mcp, bound to
127.0.0.1 unless ADDR names another host. Over HTTP, tools refuse file paths unless --allow-dir
covers them, and the runs they start read and write files (file steps, a nested workflow's
workflow_ref) only under --allow-dir.

Over HTTP every request needs "Authorization: Bearer <token>", checked before its body is read.
The token is --token or PFLOW_MCP_TOKEN; without either, pflow uses the one in
$PFLOW_HOME/mcp-serve.token (made at the first start: 32 random bytes, hex, mode 0600; delete the
file for a new one) and prints the URL and the header to stderr. --no-auth serves without a
token, and only on a loopback address (127.0.0.1, ::1, localhost). A client that stalls while
sending a request is disconnected, and connections and sessions are capped.

The MCP servers workflows use stay running between runs (warm sessions, shared by concurrent
runs; a stateful server keeps its state) until unused for --server-idle, and stop with the
server; a server's config may opt out with "keep_alive": false.

With --workflow-tools (or --workflows a,b) each saved workflow is also a tool of its own: named
after the workflow, described by it, its inputs as the input schema and its outputs as the output
schema; calling it runs the workflow as workflow_execute does and answers its outputs as
structuredContent. Saving or deleting a workflow (from the CLI or over MCP) updates the list and
clients get notifications/tools/list_changed. Saved workflows are also resources
(pflow://workflows/<name>), as are the newest run records (pflow://runs/<id>).

With --temporal host:port every run goes to that Temporal service, run by pflow workers
(docs/scale-out.md): many agents share one execution service and its history.

Also spelled 'pflow serve mcp'.`,
		Example: `  pflow mcp serve
  pflow mcp serve --http 127.0.0.1:8765
  PFLOW_MCP_TOKEN=secret pflow mcp serve --http 0.0.0.0:8765 --allow-dir ~/workflows
  pflow mcp serve --http 127.0.0.1:8765 --no-auth              # open to every local user
  pflow mcp serve --temporal 127.0.0.1:7233
  pflow mcp serve --workflow-tools                          # the 16 tools plus one per saved workflow
  pflow mcp serve --workflows changelog,release-notes --no-builder-tools`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			gctune.LongLived(f.App.Getenv)
			httpMode := cmd.Flags().Changed("http")
			if token == "" && !noAuth {
				token = f.App.Getenv("PFLOW_MCP_TOKEN")
			}
			if noAuth && !httpMode {
				return pferr.New(pferr.Usage, "--no-auth only applies to --http: over stdio the server is its client's child process and has no token").
					WithHint("Drop --no-auth, or add --http 127.0.0.1:PORT.")
			}
			if noAuth && token != "" {
				return pferr.New(pferr.Usage, "--no-auth and --token ask for opposite things").
					WithHint("Drop --no-auth to require the token, or drop --token to serve without one (loopback only).")
			}
			if httpMode && cmd.Flags().Changed("token") {
				// Every local user can read a process's command line (ps,
				// /proc/PID/cmdline), not its environment.
				fmt.Fprintln(f.IO.ErrOut, "pflow mcp: warning: every user of this machine can read --token in the process list (ps): pass the token in PFLOW_MCP_TOKEN instead, or leave it out to use the one pflow keeps in $PFLOW_HOME/"+home.MCPServeTokenFile)
			}
			addr := mcpserver.ListenAddr(httpAddr)
			if noAuth {
				if err := mcpserver.CheckNoAuth(addr); err != nil {
					return err
				}
			}
			generated := ""
			if httpMode && !noAuth && token == "" {
				tok, how, err := mcpserver.ServeToken(f.App.Paths.MCPServeToken)
				if err != nil {
					return err
				}
				token, generated = tok, how
			}
			f.App.Secrets.AddSecret("--token", token)
			var dirs []string
			for _, d := range allowDirs {
				abs, err := filepath.Abs(d)
				if err != nil {
					return pferr.Newf(pferr.Usage, "--allow-dir %s: %v", d, err)
				}
				if st, err := os.Stat(abs); err != nil || !st.IsDir() {
					return pferr.Newf(pferr.Usage, "--allow-dir %s: not an existing directory", d).
						WithHint("Name a directory that holds .pflow.md files the server may read.")
				}
				dirs = append(dirs, abs)
			}
			var temporal *app.TemporalRequest
			if t.HostPort != "" {
				if err := needTemporal(f); err != nil {
					return err
				}
				temporal = &t
			}
			srv := mcpserver.New(mcpserver.Options{
				Temporal:   temporal,
				App:        f.App,
				Version:    Version,
				HTTP:       httpMode,
				AllowDirs:  dirs,
				Log:        f.IO.ErrOut,
				ServerIdle: idle,

				WorkflowTools:  wfTools,
				Workflows:      workflows,
				NoBuilderTools: noBuilder,
			})
			if !httpMode {
				if len(dirs) > 0 {
					fmt.Fprintln(f.IO.ErrOut, "pflow mcp: note: --allow-dir only matters with --http; over stdio the server reads any .pflow.md path")
				}
				return srv.ServeStdio(ctx, f.IO.In, unmasked(f.IO.Out))
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return pferr.Newf(pferr.Usage, "cannot listen on %s: %v", addr, err).
					WithHint("Pick a free port (e.g. --http 127.0.0.1:8765), or port 0 for any free port.")
			}
			return srv.ServeHTTP(ctx, ln, mcpserver.HTTPOptions{Token: token}, func(url string) {
				fmt.Fprintf(f.IO.ErrOut, "pflow MCP server listening on %s\n", url)
				switch {
				case noAuth:
					fmt.Fprintln(f.IO.ErrOut, "No token (--no-auth): every local user and program can use this server.")
				case generated != "":
					// The token is printed as Jupyter prints its URL: the
					// user needs it to configure a client. Only this line
					// shows it; every other output masks it.
					note := "kept in " + f.App.Paths.MCPServeToken + ", mode 0600; delete the file for a new token"
					if generated == mcpserver.TokenReplaced {
						note = "new: the old token file was readable by others; " + note
					}
					fmt.Fprintf(f.IO.ErrOut, "Clients must send the header (the token is %s):\n", note)
					fmt.Fprintf(unmasked(f.IO.ErrOut), "    Authorization: Bearer %s\n", token)
					fmt.Fprintf(f.IO.ErrOut, "For example: claude mcp add --transport http pflow %s --header \"Authorization: Bearer $(cat %s)\"\n", url, f.App.Paths.MCPServeToken)
				default:
					fmt.Fprintln(f.IO.ErrOut, "Clients must send 'Authorization: Bearer <token>' with the token of --token / PFLOW_MCP_TOKEN.")
				}
			})
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP at ADDR (host:port; a bare port binds 127.0.0.1) instead of stdio")
	cmd.Flags().StringVar(&token, "token", "", "bearer token HTTP clients must send (default $PFLOW_MCP_TOKEN, else the one in $PFLOW_HOME/mcp-serve.token, made at the first start)")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "serve HTTP without a token: every local user can use the server (refused unless the address is loopback)")
	cmd.Flags().BoolVar(&wfTools, "workflow-tools", false, "publish every saved workflow as a tool of its own (input schema from its inputs, output schema from its outputs), kept in step with the library")
	cmd.Flags().StringSliceVar(&workflows, "workflows", nil, "publish only these saved workflows as tools (comma-separated names; implies --workflow-tools)")
	cmd.Flags().BoolVar(&noBuilder, "no-builder-tools", false, "leave out the 16 tools that discover, build, run and save workflows (with --workflows: a server of just those workflows)")
	cmd.Flags().DurationVar(&idle, "server-idle", mcpclient.DefaultIdleTimeout, "how long an MCP server a workflow used stays running, unused, for the next run (servers with \"keep_alive\": false are never kept)")
	addTemporalFlags(cmd.Flags(), &t.HostPort, &t.Namespace, &t.TaskQueue)
	cmd.Flags().StringArrayVar(&allowDirs, "allow-dir", nil, "directory whose .pflow.md files HTTP clients may name by path, and under which their runs' file steps and nested workflow_refs must stay (repeatable)")
	return cmd
}
