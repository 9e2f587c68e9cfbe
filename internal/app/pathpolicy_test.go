package app_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/workflow"
)

const serveEchoMD = "# Echo\nEcho.\n\n## Steps\n\n### say\nSay it.\n- type: echo\n- message: hi\n"

func serveApp(t *testing.T) (*app.App, string) {
	t.Helper()
	home := t.TempDir()
	return app.New([]string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}, nil), home
}

func serveWrite(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPathPolicyCheck(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	in := serveWrite(t, filepath.Join(allowed, "a", "w.pflow.md"), serveEchoMD)
	out := serveWrite(t, filepath.Join(outside, "w.pflow.md"), serveEchoMD)
	link := filepath.Join(allowed, "link.pflow.md")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		pol  app.PathPolicy
		path string
		ok   bool
	}{
		{"unrestricted", app.PathPolicy{}, out, true},
		{"inside allow-dir", app.PathPolicy{Restrict: true, AllowDirs: []string{allowed}}, in, true},
		{"outside allow-dir", app.PathPolicy{Restrict: true, AllowDirs: []string{allowed}}, out, false},
		{"dot-dot escape", app.PathPolicy{Restrict: true, AllowDirs: []string{allowed}}, filepath.Join(allowed, "..", filepath.Base(outside), "w.pflow.md"), false},
		{"symlink escape", app.PathPolicy{Restrict: true, AllowDirs: []string{allowed}}, link, false},
		{"restricted, no dirs", app.PathPolicy{Restrict: true}, in, false},
		{"NUL", app.PathPolicy{}, "a\x00.pflow.md", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.pol.Check(c.path)
			if (err == nil) != c.ok {
				t.Fatalf("Check(%q) = %v", c.path, err)
			}
			if err != nil && pferr.KindOf(err) != pferr.Security {
				t.Fatalf("kind %q", pferr.KindOf(err))
			}
		})
	}
}

func TestResolveAgentWorkflowOrder(t *testing.T) {
	a, home := serveApp(t)
	serveWrite(t, filepath.Join(home, "workflows", "both.pflow.md"), serveEchoMD)
	serveWrite(t, filepath.Join(home, "drafts", "both.pflow.md"), serveEchoMD)
	serveWrite(t, filepath.Join(home, "drafts", "only-draft.pflow.md"), serveEchoMD)
	file := serveWrite(t, filepath.Join(t.TempDir(), "f.pflow.md"), serveEchoMD)

	cases := []struct {
		ref   any
		saved bool
		path  string
		kind  string
	}{
		{ref: map[string]any{"nodes": []any{map[string]any{"id": "a", "type": "echo"}}}},
		{ref: `{"nodes": [{"id": "a", "type": "echo"}]}`},
		{ref: serveEchoMD},
		{ref: "both", saved: true, path: filepath.Join(home, "workflows", "both.pflow.md")},
		{ref: "only-draft", path: filepath.Join(home, "drafts", "only-draft.pflow.md")},
		{ref: file, path: file},
		{ref: "../etc/passwd", kind: pferr.Security},
		{ref: "/etc/passwd", kind: pferr.Security},
		{ref: "missing", kind: pferr.NotFound},
		{ref: 42, kind: pferr.Validation},
	}
	for _, c := range cases {
		tg, err := a.ResolveAgentWorkflow(c.ref, app.PathPolicy{})
		if c.kind != "" {
			if pferr.KindOf(err) != c.kind {
				t.Errorf("%v: error %v, want kind %s", c.ref, err, c.kind)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.ref, err)
			continue
		}
		if tg.Saved != c.saved || (c.path != "" && tg.Path != c.path) {
			t.Errorf("%v: saved=%v path=%s", c.ref, tg.Saved, tg.Path)
		}
	}
}

func TestReadTraceFileStaysInTraceDir(t *testing.T) {
	a, home := serveApp(t)
	if _, _, err := a.ReadTraceFile("latest"); pferr.KindOf(err) != pferr.NotFound {
		t.Fatalf("no traces: %v", err)
	}
	tr := serveWrite(t, filepath.Join(home, "debug", "workflow-trace-x-1.json"), `{"workflow_name":"x"}`)
	p, doc, err := a.ReadTraceFile("")
	if err != nil || p != tr || doc["workflow_name"] != "x" {
		t.Fatalf("latest: %v %v %v", p, doc, err)
	}
	serveWrite(t, filepath.Join(home, "settings.json"), `{}`)
	for _, ref := range []string{filepath.Join(home, "settings.json"), "../settings.json", "/etc/passwd", filepath.Join(home, "debug")} {
		if _, _, err := a.ReadTraceFile(ref); pferr.KindOf(err) != pferr.Security {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

// The template inputs of a saved workflow are the names its own steps and
// outputs read without declaring them; a nested step's inline workflow
// reads its own inputs (passed by param_mapping), which are not the
// parent's (they were listed as the parent's).
func TestUndeclaredTemplateInputsSkipsANestedWorkflow(t *testing.T) {
	child := map[string]any{
		"inputs": map[string]any{"topic": map[string]any{"type": "string"}},
		"nodes":  []any{map[string]any{"id": "say", "type": "echo", "params": map[string]any{"value": "${topic} ${child_only}"}}},
	}
	w := &workflow.Workflow{
		Inputs: workflow.Inputs{{Name: "declared"}},
		Nodes: []*workflow.Node{
			{ID: "call", Type: workflow.NestedType, Params: map[string]any{"workflow_ir": child, "param_mapping": map[string]any{"topic": "${t}"}}},
			{ID: "each", Type: "echo", Params: map[string]any{"value": "${item} ${declared} ${call.line}"}, Batch: &workflow.Batch{Items: []any{"${list_in}"}}},
		},
		Outputs: workflow.Outputs{{Name: "o", Source: "bare_out"}},
	}
	got := app.UndeclaredTemplateInputs(w)
	if want := []string{"bare_out", "list_in", "t"}; !reflect.DeepEqual(got, want) {
		t.Errorf("UndeclaredTemplateInputs = %q, want %q", got, want)
	}
}
