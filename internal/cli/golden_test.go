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
// error — in testdata/golden/*.json (issue #10: any change to what an agent
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
	cases := []struct {
		name string
		args []string
	}{
		{"success", []string{ex("hello.pflow.md"), "name=World"}},
		{"step-failure", []string{failing}},
		{"validation-failure", []string{invalid}},
		{"missing-inputs", []string{ex("hello.pflow.md")}},
		{"unknown-input", []string{ex("hello.pflow.md"), "name=x", "nme=y"}},
		{"not-found", []string{"no-such-workflow"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			var out, errb bytes.Buffer
			ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
			Main(context.Background(), append([]string{"--output-format", "json"}, c.args...), ios, []string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")})
			var doc any
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s\nstderr: %s", err, out.String(), errb.String())
			}
			got := out.String()
			for _, v := range volatile {
				got = v.re.ReplaceAllString(got, v.with)
			}
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
