package builtin

import (
	"testing"
	"time"
)

// TestCoreSpecs checks the shell, http, file and echo nodes are listed once,
// runnable, fully described, and retried as docs/decisions.md, "Retries per
// node type" says.
func TestCoreSpecs(t *testing.T) {
	want := map[string]struct {
		attempts int
		wait     time.Duration
		hidden   bool
	}{
		"shell":       {1, 0, false},
		"http":        {3, time.Second, false},
		"read-file":   {3, 100 * time.Millisecond, false},
		"write-file":  {3, 100 * time.Millisecond, false},
		"copy-file":   {3, 100 * time.Millisecond, false},
		"move-file":   {3, 100 * time.Millisecond, false},
		"delete-file": {3, 100 * time.Millisecond, false},
		"echo":        {1, 0, true},
		"workflow":    {1, 0, false},
		"ask":         {1, 0, false},
		"switch":      {1, 0, false},
	}
	seen := map[string]bool{}
	for _, s := range coreSpecs(Config{}) {
		w, ok := want[s.Type]
		if !ok {
			t.Errorf("unexpected core node %q", s.Type)
			continue
		}
		if seen[s.Type] {
			t.Errorf("%q listed twice", s.Type)
		}
		seen[s.Type] = true
		if s.Node == nil || s.Group == "" || s.Interface.Description == "" || len(s.Interface.Outputs) == 0 {
			t.Errorf("%q is incomplete: %+v", s.Type, s)
		}
		if s.Attempts != w.attempts || s.RetryWait != w.wait || s.Hidden != w.hidden {
			t.Errorf("%q: attempts=%d wait=%v hidden=%v, want %d %v %v", s.Type, s.Attempts, s.RetryWait, s.Hidden, w.attempts, w.wait, w.hidden)
		}
		for _, f := range s.Interface.Params {
			if f.Key == "" || f.Type == "" || f.Description == "" {
				t.Errorf("%q param %+v not fully declared", s.Type, f)
			}
		}
		for _, f := range s.Interface.Outputs {
			if f.Key == "" || f.Type == "" || f.Description == "" {
				t.Errorf("%q output %+v not fully declared", s.Type, f)
			}
		}
	}
	for typ := range want {
		if !seen[typ] {
			t.Errorf("core node %q missing", typ)
		}
	}
}

// TestMainInputsAndOutputs checks that every built-in's main input (what
// piped stdin and a '>>' chain fill) is one of its params and its main
// output one of its outputs.
func TestMainInputsAndOutputs(t *testing.T) {
	want := map[string][2]string{"shell": {"stdin", "stdout"}, "llm": {"prompt", "response"}, "http": {"body", "response"},
		"write-file": {"content", "file_path"}, "read-file": {"", "content"}, "code": {"", "result"}}
	for _, s := range Specs(Config{}) {
		if w, ok := want[s.Type]; ok && (s.StdinParam != w[0] || s.MainOutput != w[1]) {
			t.Errorf("%s: main input %q, output %q; want %q, %q", s.Type, s.StdinParam, s.MainOutput, w[0], w[1])
		}
		if _, ok := s.Interface.Param(s.StdinParam); s.StdinParam != "" && !ok {
			t.Errorf("%s: main input %q is not a param", s.Type, s.StdinParam)
		}
		if _, ok := s.Interface.Output(s.MainOutput); s.MainOutput != "" && !ok {
			t.Errorf("%s: main output %q is not an output", s.Type, s.MainOutput)
		}
	}
}
