package mcpserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.json from the current results")

// volatile are the parts of a result that change from run to run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"duration_ms": [0-9.e-]+`), `"duration_ms": 0`},
	{regexp.MustCompile(`\d{8}-\d{6}-\d{6}-[0-9a-f]{4}`), `<run-id>`},
	{regexp.MustCompile(`workflow-trace-[^"\\/]+\.json`), `<trace>.json`},
	{regexp.MustCompile(`"(started|ended|last_run|last_run_at|created_at|updated_at|timestamp)": "[^"]*"`), `"$1": "<time>"`},
}

// TestToolResultsGolden pins the structuredContent of every tool — success
// and each error type — in testdata/golden/<tool>-<case>.json (any
// change to what an agent sees is a reviewed diff; run with -update
// after an intended one). Every failure must also match the documented
// shape, docs/schemas/failure.schema.json, which the CLI's --json failures
// share.
func TestToolResultsGolden(t *testing.T) {
	f := newFixture(t, nil)
	schema := failureSchema(t)
	outside := filepath.Join(t.TempDir(), "outside.pflow.md")
	os.WriteFile(outside, []byte(greetMD), 0o644)
	invalid := "# Invalid\nTwo mistakes.\n\n## Steps\n\n### a\nA.\n- type: shel\n- command: echo ${nope.stdout}\n"
	cases := []struct {
		name, tool string
		args       map[string]any
		http       bool // in HTTP mode (file paths outside --allow-dir are refused)
	}{
		{"success", "workflow_execute", map[string]any{"workflow": greetMD, "parameters": map[string]any{"name": "Ada"}}, false},
		{"step-failure", "workflow_execute", map[string]any{"workflow": twoStepFailMD}, false},
		{"validation", "workflow_execute", map[string]any{"workflow": invalid}, false},
		{"missing-inputs", "workflow_execute", map[string]any{"workflow": greetMD}, false},
		{"not-found", "workflow_execute", map[string]any{"workflow": "no-such-workflow"}, false},
		{"security", "workflow_execute", map[string]any{"workflow": outside}, true},
		{"valid", "workflow_validate", map[string]any{"workflow": greetMD}, false},
		{"invalid", "workflow_validate", map[string]any{"workflow": invalid}, false},
		{"success", "workflow_save", map[string]any{"workflow_file": greetMD, "name": "greet", "description": "Greets someone."}, false},
		{"exists", "workflow_save", map[string]any{"workflow_file": greetMD, "name": "greet", "description": "Greets someone."}, false},
		{"bad-name", "workflow_save", map[string]any{"workflow_file": greetMD, "name": "Bad Name", "description": "x"}, false},
		{"success", "workflow_list", map[string]any{}, false},
		{"success", "workflow_describe", map[string]any{"name": "greet"}, false},
		{"not-found", "workflow_describe", map[string]any{"name": "nope"}, false},
		{"success", "workflow_discover", map[string]any{"query": "greet someone by name"}, false},
		{"bad-argument", "workflow_discover", map[string]any{"qurey": "x"}, false},
		{"success", "registry_describe", map[string]any{"nodes": []any{"read-file"}}, false},
		{"not-found", "registry_describe", map[string]any{"nodes": []any{"shel"}}, false},
		{"success", "registry_search", map[string]any{"pattern": "delete"}, false},
		{"success", "registry_list", map[string]any{"filter": "move"}, false},
		{"success", "registry_discover", map[string]any{"task": "delete a file", "limit": 1}, false},
		{"success", "registry_run", map[string]any{"node_type": "shell", "parameters": map[string]any{"command": `echo '{"a":[1]}'`}}, false},
		{"failure", "registry_run", map[string]any{"node_type": "shell", "parameters": map[string]any{"command": "exit 4"}}, false},
		{"success", "settings_set", map[string]any{"key": "GOLDEN_TOKEN", "value": "s3cret-value"}, false},
		{"success", "settings_get", map[string]any{"key": "GOLDEN_TOKEN"}, false},
		{"not-found", "trace_read", map[string]any{"trace_file": "workflow-trace-nope.json"}, false},
		{"outside", "trace_read", map[string]any{"trace_file": "/etc/passwd"}, false},
		{"not-a-trace", "trace_read", map[string]any{"trace_file": "notes.txt"}, false},
	}
	allowed := t.TempDir()
	httpF := newFixture(t, nil, httpMode(allowed))
	for _, c := range cases {
		t.Run(c.tool+"-"+c.name, func(t *testing.T) {
			fx := f
			if c.http {
				fx = httpF
			}
			fx.t = t
			r := fx.call(c.tool, c.args)
			if r.IsError != (r.Env["success"] != true) {
				t.Fatalf("isError=%v but success=%v", r.IsError, r.Env["success"])
			}
			if r.IsError {
				var doc any
				json.Unmarshal([]byte(r.Text), &doc)
				if err := schema.Validate(doc); err != nil {
					t.Errorf("the failure does not match docs/schemas/failure.schema.json: %v\n%s", err, r.Text)
				}
			}
			// An agent never gets a CLI command, except in the
			// documented cli_command field of workflow_save.
			check := maps.Clone(r.Env)
			if d := r.data(); d != nil {
				d = maps.Clone(d)
				delete(d, "cli_command")
				check["data"] = d
			}
			if txt, _ := json.Marshal(check); cliCommand.Match(txt) {
				t.Errorf("an agent is told %q:\n%s", cliCommand.Find(txt), txt)
			}
			matchGolden(t, c.tool+"-"+c.name, r.Env, fx.home, "<home>", allowed, "<allowed>", filepath.Dir(outside), "<dir>")
		})
	}
}

// matchGolden compares env, as an agent sees it (volatile parts and the
// replace pairs, old then new, substituted), with
// testdata/golden/<name>.json; -update rewrites the file.
func matchGolden(t *testing.T, name string, env map[string]any, replace ...string) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(env)
	got := b.String()
	for _, v := range volatile {
		got = v.re.ReplaceAllString(got, v.with)
	}
	got = strings.NewReplacer(replace...).Replace(got)
	golden := filepath.Join("testdata", "golden", name+".json")
	if *updateGolden {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		os.WriteFile(golden, []byte(got), 0o644)
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/mcpserver -run %s -update writes it)", err, strings.Split(t.Name(), "/")[0])
	}
	if got != string(want) {
		t.Errorf("what an agent sees changed; if that is intended, run with -update and review the diff of %s:\n%s", golden, got)
	}
}

// failureSchema loads docs/schemas/failure.schema.json.
func failureSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fakemcp.RepoRoot(t), "docs", "schemas", "failure.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
