package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

func TestWriteIsUniqueAndRedacted(t *testing.T) {
	dir := t.TempDir()
	r := redact.NewRedactor()
	r.AddSecret("API_TOKEN", "tok-123456")
	res := &runtime.Result{Status: runtime.RunSuccess, Started: time.Now(), Duration: time.Millisecond,
		Steps: []*runtime.Step{{NodeID: "a", Type: "shell", Status: runtime.StatusCompleted,
			Params:  map[string]any{"command": "echo tok-123456"},
			Outputs: map[string]any{"stdout": "tok-123456"}}}}
	w := &workflow.Workflow{}
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		p, err := Write(dir, "my flow", w, map[string]any{"token": "abc", "n": 1}, res, r)
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("trace names must be unique even within one second: %s", p)
		}
		seen[p] = true
		if !strings.Contains(p, "workflow-trace-my-flow-") {
			t.Errorf("name %s", p)
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), "tok-123456") || strings.Contains(string(data), `"abc"`) {
			t.Fatalf("secret leaked into trace: %s", data)
		}
		var f File
		if err := json.Unmarshal(data, &f); err != nil || f.FormatVersion != FormatVersion || f.NodesExecuted != 1 {
			t.Fatalf("trace: %v %+v", err, f)
		}
	}
}

func TestWriteRedactsStringsThenCutsThem(t *testing.T) {
	r := redact.NewRedactor()
	r.AddSecret("API_TOKEN", "tok-123456")
	long := "tok-123456 " + strings.Repeat("é", MaxString) // multi-byte runes across the cut
	res := &runtime.Result{Status: runtime.RunSuccess, Started: time.Now(),
		Steps: []*runtime.Step{{NodeID: "a", Type: "shell", Status: runtime.StatusCompleted,
			Outputs: map[string]any{"stdout": long, "list": []any{long}}}}}
	f, _ := writeAndRead(t, res, r)
	out := f.Nodes[0].Outputs.(map[string]any)
	marker := fmt.Sprintf("... <truncated: kept %d of %d bytes>", MaxString-1, len(long)) // "<REDACTED> " is 1 byte shorter
	for _, s := range []string{out["stdout"].(string), out["list"].([]any)[0].(string)} {
		if !strings.HasPrefix(s, "<REDACTED> é") || !strings.HasSuffix(s, marker) {
			t.Fatalf("want redacted then truncated with %q, got %.40q...%q", marker, s, s[len(s)-50:])
		}
		if len(s) > MaxString+len(marker) || !utf8.ValidString(s) {
			t.Fatalf("truncated string is %d bytes, valid UTF-8: %v", len(s), utf8.ValidString(s))
		}
	}
	if !f.Truncated {
		t.Fatal(`a cut trace must say "truncated": true`)
	}
	if got := r.Value(long).(string); strings.Contains(got, "truncated") {
		t.Fatal("Redactor.Value must not truncate")
	}
}

// writeAndRead writes res's trace with the default caps and decodes it.
func writeAndRead(t *testing.T, res *runtime.Result, r *redact.Redactor) (*File, []byte) {
	t.Helper()
	p, err := Write(t.TempDir(), "flow", &workflow.Workflow{}, nil, res, r)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("trace is not valid JSON: %v", err)
	}
	return &f, data
}
