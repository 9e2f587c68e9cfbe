package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// One resolver for both faces: the same reference finds the same workflow
// for a person and for an agent, except where who asks decides (a
// person's file wins over a saved workflow of its name; an agent's paths
// are .pflow.md files under its policy).
func TestOneResolverForBothFaces(t *testing.T) {
	a, _ := testApp(t)
	md := "# Hello\nSays hello.\n\n## Steps\n\n### a\nEcho.\n- type: shell\n- command: echo hi\n"
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.pflow.md")
	os.WriteFile(file, []byte(md), 0o644)
	if _, _, err := a.SaveFile(context.Background(), SaveFileRequest{Path: file, Name: "hello"}); err != nil {
		t.Fatal(err)
	}
	ir := `{"ir_version": "0.1.0", "nodes": [{"id": "a", "type": "shell", "params": {"command": "echo hi"}}], "edges": []}`
	for _, c := range []struct {
		ref        string
		saved      bool
		path, name string
	}{
		{ir, false, "", "inline"},
		{md, false, "", "hello"},
		{"hello", true, a.Library().Path("hello"), "hello"},
		{file, false, file, file},
	} {
		for _, who := range []Caller{{}, {Agent: true}} {
			got, err := a.Resolve(c.ref, who)
			if err != nil {
				t.Fatalf("%+v %.20q: %v", who, c.ref, err)
			}
			if got.Saved != c.saved || got.Path != c.path || got.Name != c.name || len(got.Workflow.Nodes) != 1 {
				t.Errorf("%+v %.20q: got saved=%v path=%q name=%q", who, c.ref, got.Saved, got.Path, got.Name)
			}
		}
	}
	// An agent under a policy that restricts files cannot name one.
	if _, err := a.Resolve(file, Caller{Agent: true, Policy: PathPolicy{Restrict: true}}); err == nil {
		t.Error("a restricted agent read a file outside its directories")
	}
}
