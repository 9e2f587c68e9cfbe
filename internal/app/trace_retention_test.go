package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pflow-go/pflow/internal/trace"
)

// deepWorkflow prints a JSON object nested 9,000 levels deep from a shell
// step; the next step reads one level into it, so the template engine
// parses it (value.TryParseContainer) and the trace gets the parsed value.
const deepWorkflow = `# Deep
A 9,000-level-deep value.

## Steps

### deep
Print it.
- type: shell

` + "```shell command" + `
i=0; while [ $i -lt 9000 ]; do printf '{"a":'; i=$((i+1)); done; printf 1
i=0; while [ $i -lt 9000 ]; do printf '}'; i=$((i+1)); done
` + "```" + `

### use
Read one level into it.
- type: echo
- data: ${deep.stdout.a}
`

// A run whose values are 9,000 levels deep writes a small trace cut at
// MaxDepth, and each new trace prunes the trace directory to the
// retention setting.
func TestRunWritesBoundedTracesAndPrunesOldOnes(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"retention": {"max_count": 2}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(t.TempDir(), "deep.pflow.md")
	if err := os.WriteFile(wf, []byte(deepWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	a := New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")}, &log)
	var paths []string
	for i := 0; i < 3; i++ {
		target, err := a.ResolveTarget(wf)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(context.Background(), RunRequest{Target: target})
		if err != nil || out.Failed() {
			t.Fatalf("run: %v %+v\n%s", err, out.Result.Failure, log.String())
		}
		paths = append(paths, out.TracePath)
	}
	left, _ := filepath.Glob(filepath.Join(home, "debug", trace.FilePattern))
	if len(left) != 2 || !contains(left, paths[2]) || !contains(left, paths[1]) {
		t.Fatalf("retention max_count 2: left %v of %v", left, paths)
	}
	data, err := os.ReadFile(paths[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > trace.MaxFileBytes || len(data) > 200_000 {
		t.Fatalf("trace of a deep value is %d bytes", len(data))
	}
	var f trace.File
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	v, levels := f.Nodes[1].Params.(map[string]any)["data"], 1
	for {
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		v, levels = m["a"], levels+1
	}
	if !f.Truncated || levels != trace.MaxDepth || v != "<truncated: deeper than 64 levels; object of 1 key>" {
		t.Fatalf("the parsed deep value should be cut at the depth cap: %d levels, then %v", levels, v)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
