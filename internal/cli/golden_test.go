package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.json from the current output")

// volatile are the parts of an envelope that change from run to run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"duration_ms": [0-9.]+`), `"duration_ms": 0`},
	{regexp.MustCompile(`"run_id": "[^"]+"`), `"run_id": "<run-id>"`},
	{regexp.MustCompile(`pflow --resume [0-9a-z-]+`), `pflow --resume <run-id>`},
	{regexp.MustCompile(`"trace_path": "[^"]+"`), `"trace_path": "<trace>"`},
}

// TestJSONEnvelopesGolden pins what `pflow --output-format json` prints —
// success, a failed step, a validation failure, missing inputs and a pre-run
// error — in testdata/golden/*.json (any change to what an agent
// sees shows up as a reviewed diff; run with -update after an intended one).
func TestJSONEnvelopesGolden(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(wd, "..", "..")
	ex := func(name string) string { return filepath.Join(repo, "examples", name) }
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing.pflow.md")
	os.WriteFile(failing, []byte("# Failing\nA step that fails.\n\n## Steps\n\n### ok\nFine.\n- type: shell\n- command: echo fine\n\n### boom\nFails.\n- type: shell\n- command: echo oops >&2; exit 3\n"), 0o644)
	invalid := filepath.Join(dir, "invalid.pflow.md")
	os.WriteFile(invalid, []byte("# Invalid\nTwo mistakes.\n\n## Steps\n\n### a\nA.\n- type: shel\n- command: echo ${nope.stdout}\n"), 0o644)
	degraded := filepath.Join(dir, "degraded.pflow.md")
	os.WriteFile(degraded, []byte("# Degraded\nA failure handled by an error edge.\n\n## Steps\n\n### boom\nFails.\n- type: shell\n- command: exit 3\n\n```yaml on\nerror: recover\n```\n\n### recover\nRecovers.\n- type: shell\n- command: echo recovered\n"), 0o644)
	j := func(args ...string) []string { return append([]string{"--output-format", "json"}, args...) }
	cases := []struct {
		name string
		args []string
	}{
		{"success", j(ex("hello.pflow.md"), "name=World")},
		{"degraded", j(degraded)},
		{"step-failure", j(failing)},
		{"validation-failure", j(invalid)},
		{"missing-inputs", j(ex("hello.pflow.md"))},
		{"unknown-input", j(ex("hello.pflow.md"), "name=x", "nme=y")},
		{"not-found", j("no-such-workflow")},
		// Every other command's --json failure has the same shape.
		{"describe-not-found", []string{"workflow", "describe", "nope", "--json"}},
		{"registry-describe-unknown", []string{"registry", "describe", "shel", "--json"}},
		{"runs-show-unknown", []string{"runs", "show", "nope", "--json"}},
		{"save-invalid", []string{"workflow", "save", invalid, "--name", "bad", "--json"}},
	}
	schema := failureSchema(t, repo)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			var out, errb bytes.Buffer
			ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
			Main(context.Background(), c.args, ios, []string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")})
			var doc any
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s\nstderr: %s", err, out.String(), errb.String())
			}
			if m, _ := doc.(map[string]any); m["success"] != true {
				// docs/schemas/failure.schema.json is the contract of every failure.
				if err := schema.Validate(doc); err != nil {
					t.Errorf("the failure does not match docs/schemas/failure.schema.json: %v\n%s", err, out.String())
				}
			}
			got := out.String()
			for _, v := range volatile {
				got = v.re.ReplaceAllString(got, v.with)
			}
			got = strings.ReplaceAll(got, home, "<home>")
			got = strings.ReplaceAll(got, dir, "<dir>")
			got = strings.ReplaceAll(got, repo, "<repo>")
			golden := filepath.Join("testdata", "golden", c.name+".json")
			if *updateGolden {
				os.WriteFile(golden, []byte(got), 0o644)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/cli -run TestJSONEnvelopesGolden -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("the JSON envelope changed; if that is intended, run with -update and review the diff of %s:\n%s", golden, got)
			}
		})
	}
}

// failureSchema loads docs/schemas/failure.schema.json, the documented shape
// of every JSON failure (docs/json-output.md).
func failureSchema(t *testing.T, repo string) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docs", "schemas", "failure.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("docs/schemas/failure.schema.json: %v", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("docs/schemas/failure.schema.json: %v", err)
	}
	return r
}
