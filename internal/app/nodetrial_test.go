package app

import (
	"context"
	"os"
	"testing"
)

// TestTryNodePassesTemplateTextThrough: a single node run (CLI registry run
// and MCP registry_run alike) applies no templates, so "${x}" reaches the
// node as typed instead of failing validation as an undefined input.
func TestTryNodePassesTemplateTextThrough(t *testing.T) {
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	tr, err := a.TryNode(context.Background(), "shell", map[string]any{"command": "printf '%s' '${not_a_template}'"}, PathPolicy{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Outputs["stdout"]; got != "${not_a_template}" {
		t.Fatalf("stdout = %#v", got)
	}
}
