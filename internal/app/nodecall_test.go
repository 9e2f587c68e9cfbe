package app

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/file"
	"github.com/pflow-go/pflow/internal/nodes/shell"
	"github.com/pflow-go/pflow/internal/pferr"
)

func TestParseNodeArgsTypesBySchema(t *testing.T) {
	dir := t.TempDir()
	body := filepath.Join(dir, "env.json")
	os.WriteFile(body, []byte("{\"A\": \"1\"}\n"), 0o644)
	got, err := ParseNodeArgs(shell.Spec(), []string{
		"--command", "echo hi", "--timeout=2.5", "--max-output=10", "--ignore-errors",
		"--strip_newline=false", "--env=@" + body, "--stdin=@@at", "cwd=" + dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"command": "echo hi", "timeout": 2.5, "max_output": int64(10), "ignore_errors": true,
		"strip_newline": false, "env": map[string]any{"A": "1"}, "stdin": "@at", "cwd": dir}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	// A value that does not fit its type stays text for validation to report.
	got, err = ParseNodeArgs(shell.Spec(), []string{"--timeout=soon", "--command=007"})
	if err != nil || got["timeout"] != "soon" || got["command"] != "007" {
		t.Fatalf("got %#v, %v", got, err)
	}
}

func TestParseNodeArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--comand=x"}, "unknown parameter --comand for node 'shell' — did you mean --command?"},
		{[]string{"--verbose"}, "--verbose is a flag of pflow itself, and flags go before the node"},
		{[]string{"--command"}, "parameter --command of node 'shell' has no value"},
		{[]string{"echo"}, `argument "echo" after node 'shell' is not a parameter`},
		{[]string{"-c", "x"}, "'-c' after node 'shell' is not a parameter"},
		{[]string{">", "f"}, "a lone '>' reached pflow"},
		{[]string{"--command=@/nonexistent/x.sh"}, "--command=@/nonexistent/x.sh: cannot read the file: no such file"},
	}
	for _, c := range cases {
		_, err := ParseNodeArgs(shell.Spec(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || pferr.As(err).ExitCode() != pferr.ExitUsage {
			t.Errorf("%v: got %v, want %q (usage error)", c.args, err, c.want)
		}
	}
}

func TestNodeWorkflowLinksMainOutputs(t *testing.T) {
	sh := shell.Spec()
	calls := []NodeCall{
		{Spec: sh, Params: map[string]any{"command": "echo ${HOME}"}},
		{Spec: sh, Params: map[string]any{"command": "wc -w"}},
		{Spec: file.WriteSpec(), Params: map[string]any{"file_path": "out.txt"}},
	}
	w, err := NodeWorkflow(calls, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range w.Nodes {
		ids = append(ids, n.ID)
	}
	if strings.Join(ids, " ") != "shell shell-2 write-file" {
		t.Fatalf("ids: %v", ids)
	}
	if w.Nodes[0].Params["stdin"] != "${input}" || w.Inputs.Get(ChainInput) == nil || !w.Inputs.Get(ChainInput).Stdin {
		t.Fatalf("stdin input: %#v %#v", w.Nodes[0].Params, w.Inputs)
	}
	if w.Nodes[0].Params["command"] != "echo $${HOME}" {
		t.Fatalf("values must stay literal: %#v", w.Nodes[0].Params)
	}
	if w.Nodes[1].Params["stdin"] != "${shell.stdout}" || w.Nodes[2].Params["content"] != "${shell-2.stdout}" {
		t.Fatalf("links: %#v %#v", w.Nodes[1].Params, w.Nodes[2].Params)
	}
	if len(w.Edges) != 2 || w.Edges[1].From != "shell-2" || w.Edges[1].To != "write-file" {
		t.Fatalf("edges: %#v", w.Edges)
	}
	if o := w.Outputs.Get("result"); o == nil || o.Source != "${write-file.file_path}" {
		t.Fatalf("outputs: %#v", w.Outputs)
	}
	// A node without a main input cannot follow '>>'.
	_, err = NodeWorkflow([]NodeCall{{Spec: sh, Params: map[string]any{"command": "x"}}, {Spec: file.DeleteSpec(), Params: map[string]any{"file_path": "x"}}}, false)
	if err == nil || !strings.Contains(err.Error(), "node 'delete-file' has no main input") {
		t.Fatalf("got %v", err)
	}
}

func TestMainInputAndOutputOfBuiltins(t *testing.T) {
	want := map[string][2]string{"shell": {"stdin", "stdout"}, "write-file": {"content", "file_path"}, "read-file": {"", "content"}}
	for _, s := range []*node.Spec{shell.Spec(), file.WriteSpec(), file.ReadSpec()} {
		w := want[s.Type]
		if s.StdinParam != w[0] || s.MainOutput != w[1] {
			t.Errorf("%s: main input %q, output %q; want %q, %q", s.Type, s.StdinParam, s.MainOutput, w[0], w[1])
		}
		if s.StdinParam != "" {
			if _, ok := s.Interface.Param(s.StdinParam); !ok {
				t.Errorf("%s: main input %q is not a param", s.Type, s.StdinParam)
			}
		}
		if _, ok := s.Interface.Output(s.MainOutput); !ok {
			t.Errorf("%s: main output %q is not an output", s.Type, s.MainOutput)
		}
	}
}
