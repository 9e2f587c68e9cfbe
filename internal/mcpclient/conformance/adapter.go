// Package conformance is a small client adapter over pflow's MCP client
// for the official conformance suite (@modelcontextprotocol/conformance):
// the suite starts a scenario server and runs the adapter with the server's
// URL as the last argument and the scenario in MCP_CONFORMANCE_SCENARIO.
// The adapter connects with pflow's client (streamable HTTP), lists the
// tools and calls each one, exactly as a workflow's MCP node would.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/value"
)

// EnvVar makes a test binary act as the adapter (see Run).
const EnvVar = "PFLOW_CONFORMANCE_ADAPTER"

// Run is the adapter's main: args[len(args)-1] is the server URL. It
// returns the process exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: adapter <server-url>")
		return 2
	}
	url := args[len(args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	srv, err := mcpclient.Resolve("conformance", map[string]any{"type": "http", "url": url, "startup_timeout": int64(20), "timeout": int64(20)}, nil, stderr)
	if err != nil {
		fmt.Fprintln(stderr, mcpclient.ErrorText(err))
		return 1
	}
	// A server that asks for OAuth (the auth/* scenarios) gets pflow's
	// sign-in, as `pflow mcp login` runs it, with the browser step done by
	// following the authorization server's redirect over HTTP; the run then
	// connects with the stored token, as a workflow would.
	dir, err := os.MkdirTemp("", "pflow-conformance-")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv.TokenFile = filepath.Join(dir, "conformance.json")
	// A pre-registered client comes in the scenario's context.
	var sc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		json.Unmarshal([]byte(c), &sc)
	}
	srv.OAuthClientID, srv.OAuthClientSecret = sc.ClientID, sc.ClientSecret
	sess, done, err := mcpclient.ConnectSignIn(ctx, srv, srv.TokenFile, mcpclient.LoginOptions{Out: stderr, Fetch: FollowRedirects})
	if err != nil {
		fmt.Fprintln(stderr, mcpclient.ErrorText(err))
		return 1
	}
	defer done()
	defer sess.Close()
	tools, err := sess.ListTools(ctx)
	if err != nil {
		fmt.Fprintln(stderr, mcpclient.ErrorText(err))
		return 1
	}
	fmt.Fprintf(stdout, "scenario %s: %d tools\n", scenario, len(tools))
	for _, t := range tools {
		args, err := mcpclient.CoerceArgs(t.Name, t.InputSchema, sampleArgs(t.InputSchema))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		res, err := sess.CallTool(ctx, t.Name, args, 20*time.Second)
		if err != nil {
			fmt.Fprintln(stderr, mcpclient.ErrorText(err))
			return 1
		}
		ex := mcpclient.ExtractResult(res)
		if ex.IsError {
			fmt.Fprintf(stderr, "tool %s failed: %s\n", t.Name, ex.Message)
			return 1
		}
		fmt.Fprintf(stdout, "%s -> %s\n", t.Name, value.Stringify(ex.Result))
	}
	return 0
}

// sampleArgs builds arguments for a tool: the numbers 1, 2, 3... for
// numeric properties (so add_numbers gets a=1, b=2), "test" for strings,
// true for booleans.
func sampleArgs(schema any) map[string]any {
	out := map[string]any{}
	n := int64(0)
	for _, f := range mcpclient.SchemaFields(schema) {
		switch f.Type {
		case "int", "float":
			n++
			out[f.Key] = n
		case "str":
			out[f.Key] = "test"
		case "bool":
			out[f.Key] = true
		}
	}
	return out
}

// FollowRedirects is the browser of an automated sign-in: it opens the
// authorization URL and follows the authorization server's redirects to
// the loopback redirect URI, which completes the sign-in.
func FollowRedirects(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
