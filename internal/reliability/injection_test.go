package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/llmtest"
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
// shell quoting style; each step brackets what the shell received.
func injectionSteps(expr string) string {
	block := func(id, cmd string) string {
		return fmt.Sprintf("### %s\nQuote style %s.\n- type: shell\n\n```shell command\n%s\n```\n\n", id, id, cmd)
	}
	return block("dq", `printf '[%s]' "`+expr+`"`) +
		block("sq", `printf '[%s]' '`+expr+`'`) +
		block("mixed", `printf '[%s]' "a"'`+expr+`'"b"`) +
		block("heredoc", "cat <<EOF\n["+expr+"]\nEOF") +
		block("subst", `printf '[%s]' "$(printf '%s' "`+expr+`")"`) +
		block("unquoted", `set -f; printf '[%s]' `+expr)
}

const injectionOutputs = `## Outputs

### dq
What the step printed.
- source: ${dq.stdout}

### sq
What the step printed.
- source: ${sq.stdout}

### mixed
What the step printed.
- source: ${mixed.stdout}

### heredoc
What the step printed.
- source: ${heredoc.stdout}

### subst
What the step printed.
- source: ${subst.stdout}

### unquoted
What the step printed.
- source: ${unquoted.stdout}
`

// wantQuoted is what each quoting style must print for value v.
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
	}
}

// checkInjection asserts that nothing ran in dir and that every style got v.
func checkInjection(t *testing.T, path, v, dir string, outputs map[string]any) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatalf("%s: the value %q ran as a command", path, v)
	}
	for style, want := range wantQuoted(v) {
		if got, _ := outputs[style].(string); got != want {
			t.Errorf("%s, %s: the shell received %q, want %q", path, style, got, want)
		}
	}
}

// TestHostileValuesStayData sends hostile values through every data path
// into shell commands written in every quoting style (DESIGN D16): nothing
// executes and each value arrives where the author's quoting says.
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
		{name: "cli input", inputs: declV, steps: injectionSteps("${v}")},
		{name: "stdin", inputs: "### v\nThe value, piped.\n- type: string\n- stdin: true\n\n", steps: injectionSteps("${v}"), stdin: true},
		{name: "http response", inputs: declI, steps: "### fetch\nGet it.\n- type: http\n- url: " + api.URL + "/?i=${i}\n\n" + injectionSteps("${fetch.response.v}")},
		{name: "mcp result", inputs: declI, steps: "### tool\nGet it.\n- type: mcp-inj-hostile\n- i: ${i}\n\n" + injectionSteps("${tool.value}")},
		{name: "llm answer", inputs: declI, steps: "### ask\nAsk.\n- type: llm\n- model: openai/gpt-4o-mini\n- prompt: give value ${i}\n\n" + injectionSteps("${ask.response}")},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			body := "# Injection via " + p.name + "\nHostile data.\n\n## Inputs\n\n" + p.inputs + "## Steps\n\n" + p.steps + injectionOutputs
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
		steps := strings.ReplaceAll(injectionSteps("${item}"), "- type: shell\n", "- type: shell\n- batch: {items: \"${vs}\"}\n")
		var outs strings.Builder
		outs.WriteString("## Outputs\n\n")
		for style := range wantQuoted("") {
			fmt.Fprintf(&outs, "### %s\nWhat the step printed.\n- source: ${%s.results}\n\n", style, style)
		}
		body := "# Injection via batch items\nHostile data.\n\n## Inputs\n\n### vs\nThe values.\n- type: array\n\n## Steps\n\n" + steps + outs.String()
		wf := writeFile(t, filepath.Join(t.TempDir(), "batch.pflow.md"), body)
		dir := t.TempDir()
		r := pflowIn(t, root, dir, nil, "", "--output-format", "json", "--no-trace", wf, "vs="+string(items))
		if r.Code != 0 {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
		}
		var env struct {
			Result map[string][]struct {
				Stdout string `json:"stdout"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, r.Stdout)
		}
		for i, v := range hostileValues {
			outputs := map[string]any{}
			for style, results := range env.Result {
				if i < len(results) {
					outputs[style] = results[i].Stdout
				}
			}
			checkInjection(t, "batch item", v, dir, outputs)
		}
	})

	t.Run("mcp serve parameters", func(t *testing.T) {
		body := "# Injection via MCP parameters\nHostile data.\n\n## Inputs\n\n### v\nThe value.\n- type: string\n\n## Steps\n\n" + injectionSteps("${v}") + injectionOutputs
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
