package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/llmtest"
	"github.com/pflow-go/pflow/internal/value"
)

// hostileValues would run a command, split words, expand globs or
// variables, or read as an option if pflow pasted them into a command. Each
// run happens in a fresh directory; PWNED appearing there is an injection.
var hostileValues = []string{
	`x"; touch PWNED; echo "`,
	`x'; touch PWNED; echo '`,
	"$(touch PWNED)",
	"`touch PWNED`",
	"; touch PWNED",
	"&& touch PWNED",
	"a\ntouch PWNED\nb",
	"$HOME ${HOME} $PFLOW_HOME",
	"* ?",
	"--help -n",
	`\"; touch PWNED #`,
	"EOF\ntouch PWNED\nEOF",
	"}; touch PWNED; ${",
	"'\"'\"'; touch PWNED; '",
}

// injectionSteps reads one value, written as the template expr, in every
// shell quoting style (each step brackets what the shell received), in the
// path and query of an http url (the echo API at api returns what it
// received) and, withCode, in a code step through its inputs. (A code step
// costs two Python start-ups, so only the batch path, which sends every
// value in one run, includes it; the sink sees the same value whatever path
// it came by.)
func injectionSteps(expr, api string, withCode bool) string {
	block := func(id, cmd string) string {
		return fmt.Sprintf("### %s\nQuote style %s.\n- type: shell\n\n```shell command\n%s\n```\n\n", id, id, cmd)
	}
	steps := block("dq", `printf '[%s]' "`+expr+`"`) +
		block("sq", `printf '[%s]' '`+expr+`'`) +
		block("mixed", `printf '[%s]' "a"'`+expr+`'"b"`) +
		block("heredoc", "cat <<EOF\n["+expr+"]\nEOF") +
		block("subst", `printf '[%s]' "$(printf '%s' "`+expr+`")"`) +
		block("unquoted", `set -f; printf '[%s]' `+expr) +
		"### url\nThe value in a URL.\n- type: http\n- url: " + api + "/echo/" + expr + "?q=" + expr + "&fixed=1\n\n"
	if withCode {
		steps += "### code\nThe value in Python.\n- type: code\n- inputs: {v: \"" + expr + "\"}\n\n```python code\nv: str\nresult: str = '[' + v + ']'\n```\n\n"
	}
	return steps
}

// injectionSinks maps each output to the step and output path holding what
// the sink received.
var injectionSinks = map[string]string{
	"dq": "dq.stdout", "sq": "sq.stdout", "mixed": "mixed.stdout", "heredoc": "heredoc.stdout",
	"subst": "subst.stdout", "unquoted": "unquoted.stdout", "code": "code.result",
	"urlseg": "url.response.seg", "urlq": "url.response.q", "urlquery": "url.response.query",
}

// injectionOutputs declares one workflow output per sink but code.
func injectionOutputs() string {
	var b strings.Builder
	b.WriteString("## Outputs\n\n")
	for _, name := range value.SortedKeys(injectionSinks) {
		if name == "code" {
			continue
		}
		fmt.Fprintf(&b, "### %s\nWhat the sink received.\n- source: ${%s}\n\n", name, injectionSinks[name])
	}
	return b.String()
}

// echoAPI answers /echo/<segment>?q=... with the decoded segment, q and the
// set of query keys, so a test sees exactly what reached each URL part.
func echoAPI(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seg, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/echo/"))
		if err != nil || strings.Contains(strings.TrimPrefix(r.URL.EscapedPath(), "/echo/"), "/") {
			seg = "BAD PATH " + r.URL.EscapedPath()
		}
		var keys []string
		for k := range r.URL.Query() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"seg": seg, "q": r.URL.Query().Get("q"), "query": strings.Join(keys, ",")})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// wantQuoted is what each sink must receive for value v.
func wantQuoted(v string) map[string]string {
	fields := strings.Fields(v)
	unquoted := ""
	for _, f := range fields {
		unquoted += "[" + f + "]"
	}
	if len(fields) == 0 {
		unquoted = "[]"
	}
	return map[string]string{
		"dq": "[" + v + "]", "sq": "[" + v + "]", "mixed": "[a" + v + "b]",
		"heredoc": "[" + v + "]", "subst": "[" + v + "]", "unquoted": unquoted,
		"code": "[" + v + "]", "urlseg": v, "urlq": v, "urlquery": "fixed,q",
	}
}

// checkInjection asserts that nothing ran in dir and that every style got v.
func checkInjection(t *testing.T, path, v, dir string, outputs map[string]any) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatalf("%s: the value %q ran as a command", path, v)
	}
	for style, want := range wantQuoted(v) {
		got, ok := outputs[style].(string)
		if style == "code" && !ok {
			continue // only the batch path runs a code step
		}
		if got != want {
			t.Errorf("%s, %s: the sink received %q, want %q", path, style, got, want)
		}
	}
}

// TestHostileValuesStayData sends hostile values through every data path
// into shell commands written in every quoting style, a code step and the
// path and query of an http url (see docs/decisions.md, "Template values are
// data"): nothing executes and each
// value arrives where the author's quoting says. Header values are covered
// by TestURLAndHeaderSinksEndToEnd (urlsink_test.go).
func TestHostileValuesStayData(t *testing.T) {
	// An HTTP API and a remote MCP server that hand out hostile[i].
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.URL.Query().Get("i"))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"v": hostileValues[i]})
	}))
	t.Cleanup(api.Close)
	srv := mcp.NewServer(&mcp.Implementation{Name: "inj", Version: "1"}, nil)
	type in struct {
		I int `json:"i"`
	}
	type out struct {
		Value string `json:"value"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "hostile", Description: "Returns a hostile value."}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		return nil, out{Value: hostileValues[a.I]}, nil
	})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(mcpSrv.Close)
	llm := llmtest.NewOpenAI(t)
	echo := echoAPI(t)

	root := t.TempDir()
	src := t.TempDir()
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"inj": map[string]any{"type": "http", "url": mcpSrv.URL}}})
	mustPflow(t, root, nil, "mcp", "add", writeFile(t, filepath.Join(src, "servers.json"), string(servers)))
	mustPflow(t, root, nil, "mcp", "sync", "inj")

	declV := "### v\nThe value.\n- type: string\n\n"
	declI := "### i\nIts index.\n- type: integer\n\n"
	paths := []struct {
		name, inputs, steps string
		stdin               bool // v is piped, not an argument
	}{
		{name: "cli input", inputs: declV, steps: injectionSteps("${v}", echo.URL, false)},
		{name: "stdin", inputs: "### v\nThe value, piped.\n- type: string\n- stdin: true\n\n", steps: injectionSteps("${v}", echo.URL, false), stdin: true},
		{name: "http response", inputs: declI, steps: "### fetch\nGet it.\n- type: http\n- url: " + api.URL + "/?i=${i}\n\n" + injectionSteps("${fetch.response.v}", echo.URL, false)},
		{name: "mcp result", inputs: declI, steps: "### tool\nGet it.\n- type: mcp-inj-hostile\n- i: ${i}\n\n" + injectionSteps("${tool.value}", echo.URL, false)},
		{name: "llm answer", inputs: declI, steps: "### ask\nAsk.\n- type: llm\n- model: openai/gpt-4o-mini\n- prompt: give value ${i}\n\n" + injectionSteps("${ask.response}", echo.URL, false)},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			body := "# Injection via " + p.name + "\nHostile data.\n\n## Inputs\n\n" + p.inputs + "## Steps\n\n" + p.steps + injectionOutputs()
			wf := writeFile(t, filepath.Join(t.TempDir(), "inj.pflow.md"), body)
			for i, v := range hostileValues {
				llm.Enqueue(llmtest.Text(v))
				dir := t.TempDir()
				args := []string{"--output-format", "json", "--no-trace", wf}
				stdin := ""
				switch {
				case p.stdin:
					stdin = v
				case p.inputs == declV:
					args = append(args, "v="+v)
				default:
					args = append(args, "i="+strconv.Itoa(i))
				}
				r := pflowIn(t, root, dir, llm.EnvList(), stdin, args...)
				if r.Code != 0 {
					t.Fatalf("value %q: exit %d\nstdout: %s\nstderr: %s", v, r.Code, r.Stdout, r.Stderr)
				}
				var env struct {
					Result map[string]any `json:"result"`
				}
				if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, r.Stdout)
				}
				checkInjection(t, p.name, v, dir, env.Result)
			}
		})
	}

	t.Run("batch item", func(t *testing.T) {
		items, _ := json.Marshal(hostileValues)
		steps := injectionSteps("${item}", echo.URL, true)
		for _, typ := range []string{"shell", "code", "http"} {
			steps = strings.ReplaceAll(steps, "- type: "+typ+"\n", "- type: "+typ+"\n- batch: {items: \"${vs}\"}\n")
		}
		var outs strings.Builder
		outs.WriteString("## Outputs\n\n")
		for _, step := range []string{"dq", "sq", "mixed", "heredoc", "subst", "unquoted", "code", "url"} {
			fmt.Fprintf(&outs, "### %s\nWhat the step received.\n- source: ${%s.results}\n\n", step, step)
		}
		body := "# Injection via batch items\nHostile data.\n\n## Inputs\n\n### vs\nThe values.\n- type: array\n\n## Steps\n\n" + steps + outs.String()
		wf := writeFile(t, filepath.Join(t.TempDir(), "batch.pflow.md"), body)
		dir := t.TempDir()
		r := pflowIn(t, root, dir, nil, "", "--output-format", "json", "--no-trace", wf, "vs="+string(items))
		if r.Code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
		}
		var env struct {
			Result map[string][]map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, r.Stdout)
		}
		for i, v := range hostileValues {
			outputs := map[string]any{}
			for sink, path := range injectionSinks {
				step, field, _ := strings.Cut(path, ".")
				if results := env.Result[step]; i < len(results) {
					var cur any = results[i]
					for _, k := range strings.Split(field, ".") {
						m, _ := cur.(map[string]any)
						cur = m[k]
					}
					outputs[sink] = cur
				}
			}
			if _, ok := outputs["code"].(string); !ok {
				t.Fatalf("item %d: the code step's result is missing: %v", i, env.Result["code"])
			}
			checkInjection(t, "batch item", v, dir, outputs)
		}
	})

	t.Run("mcp serve parameters", func(t *testing.T) {
		body := "# Injection via MCP parameters\nHostile data.\n\n## Inputs\n\n### v\nThe value.\n- type: string\n\n## Steps\n\n" + injectionSteps("${v}", echo.URL, false) + injectionOutputs()
		c := startServe(t, root, nil)
		defer c.close()
		for _, v := range hostileValues {
			r := c.call("workflow_execute", map[string]any{"workflow": body, "parameters": map[string]any{"v": v}})
			isErr, env := toolEnvelope(r)
			if isErr {
				t.Fatalf("value %q: workflow_execute failed: %v", v, env)
			}
			data, _ := env["data"].(map[string]any)
			outputs, _ := data["outputs"].(map[string]any)
			checkInjection(t, "mcp serve parameters", v, root, outputs)
		}
	})
}

// TestUnsafeSpliceOptIn: a step that opts in with unsafe_splice gets the
// value pasted as shell code (the old behaviour), and --validate-only warns.
func TestUnsafeSpliceOptIn(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	wf := writeFile(t, filepath.Join(t.TempDir(), "splice.pflow.md"), "# Splice\nRuns a trusted snippet.\n\n## Inputs\n\n### snippet\nShell code I wrote.\n- type: string\n\n## Steps\n\n### run\nRun it.\n- type: shell\n- unsafe_splice: true\n- command: ${snippet}\n")
	r := pflowIn(t, root, dir, nil, "", "--validate-only", wf)
	if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "unsafe_splice: true") {
		t.Errorf("--validate-only should pass with a warning about unsafe_splice: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = pflowIn(t, root, dir, nil, "", wf, "snippet=touch PWNED")
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); r.Code != 0 || err != nil {
		t.Errorf("with unsafe_splice the value should run as shell: exit %d, %v\n%s", r.Code, err, r.Stderr)
	}
}
