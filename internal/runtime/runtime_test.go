package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

type fakeCatalog map[string]*node.Spec

func (c fakeCatalog) Lookup(t string) (*node.Spec, bool) { s, ok := c[t]; return s, ok }
func (c fakeCatalog) Types() []string                    { return value.SortedKeys(c) }

// testCatalog has:
//
//	echo:  outputs {out: params.value}
//	fail:  error result with message params.msg
//	flaky: Go error until attempt params.succeed_on
//	wait:  blocks until ctx is cancelled
//	upper: outputs {out: upper(params.value)}
func testCatalog(calls *atomic.Int64) fakeCatalog {
	return fakeCatalog{
		"echo": {Type: "echo", Attempts: 1, Interface: node.Interface{
			Params:  []node.Field{{Key: "value", Type: "any"}, {Key: "text", Type: "str"}, {Key: "obj", Type: "dict"}},
			Outputs: []node.Field{{Key: "out", Type: "any"}}},
			Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
				if calls != nil {
					calls.Add(1)
				}
				out := map[string]any{"out": r.Params["value"]}
				if t, ok := r.Params["text"]; ok {
					out["text"] = t
				}
				if o, ok := r.Params["obj"]; ok {
					out["obj"] = o
				}
				return node.Ok(out), nil
			})},
		"fail": {Type: "fail", Attempts: 3, Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			if calls != nil {
				calls.Add(1)
			}
			return node.Fail(fmt.Sprint(r.Params["msg"]), map[string]any{"exit_code": int64(2), "stderr": "boom"}), nil
		})},
		"flaky": {Type: "flaky", Attempts: 3, Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			if calls != nil {
				calls.Add(1)
			}
			n, _ := node.Int(r.Params, "succeed_on", 1)
			if r.Attempt < n {
				return nil, fmt.Errorf("transient failure on attempt %d", r.Attempt)
			}
			return node.Ok(map[string]any{"attempt": int64(r.Attempt)}), nil
		})},
		"wait": {Type: "wait", Attempts: 1, Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})},
	}
}

func chain(nodes ...*workflow.Node) *workflow.Workflow {
	w := &workflow.Workflow{Nodes: nodes}
	for i := 0; i+1 < len(nodes); i++ {
		w.Edges = append(w.Edges, workflow.Edge{From: nodes[i].ID, To: nodes[i+1].ID})
	}
	w.Normalize()
	return w
}

func step(id, typ string, params map[string]any) *workflow.Node {
	return &workflow.Node{ID: id, Type: typ, Params: params}
}

func TestTemplatesCarryDataBetweenSteps(t *testing.T) {
	w := chain(
		step("a", "echo", map[string]any{"value": `{"items":[{"id":7}]}`}),
		step("b", "echo", map[string]any{"value": "${a.out.items[0].id}", "text": "id=${a.out.items[0].id} who=${name}"}),
	)
	w.Outputs = workflow.Outputs{{Name: "id", Source: "${b.out}"}, {Name: "text", Source: "b.text"}}
	res := Run(context.Background(), w, map[string]any{"name": "Ada"}, Options{Catalog: testCatalog(nil)})
	if res.Status != RunSuccess {
		t.Fatalf("status %s, failure %+v", res.Status, res.Failure)
	}
	if got := res.Outputs["id"]; got != int64(7) {
		t.Errorf("lone template must keep the native type: got %#v", got)
	}
	if got := res.Outputs["text"]; got != "id=7 who=Ada" {
		t.Errorf("text output = %#v", got)
	}
	if len(res.OutputOrder) != 2 || res.OutputOrder[0] != "id" {
		t.Errorf("output order %v", res.OutputOrder)
	}
}

func TestErrorActionStopsUnlessAnEdgeHandlesIt(t *testing.T) {
	t.Run("no edge: run fails at the node", func(t *testing.T) {
		var calls atomic.Int64
		w := chain(step("boom", "fail", map[string]any{"msg": "disk full"}), step("after", "echo", nil))
		res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(&calls)})
		if res.Success() || res.Failure == nil || res.Failure.NodeID != "boom" || res.Failure.Message != "disk full" {
			t.Fatalf("want failure at boom, got %s %+v", res.Status, res.Failure)
		}
		if calls.Load() != 1 {
			t.Errorf("an error result must not be retried without 'retries': %d calls", calls.Load())
		}
		if res.Failure.Details["shell_exit_code"] != int64(2) {
			t.Errorf("failure details: %v", res.Failure.Details)
		}
		if got := res.Steps[len(res.Steps)-1]; got.NodeID != "after" || got.Status != StatusNotExecuted {
			t.Errorf("the step after the failure must be not_executed: %+v", got)
		}
		if ns := res.Shared["boom"].(map[string]any); ns["error"] != "disk full" {
			t.Errorf("${boom.error} = %v", ns["error"])
		}
	})
	t.Run("error edge: recovery runs, run is degraded", func(t *testing.T) {
		w := &workflow.Workflow{Nodes: []*workflow.Node{
			step("boom", "fail", map[string]any{"msg": "disk full"}),
			step("next", "echo", map[string]any{"value": "not reached"}),
			step("recover", "echo", map[string]any{"value": "recovered from: ${boom.error}"}),
		}, Edges: []workflow.Edge{{From: "boom", To: "next"}, {From: "boom", To: "recover", Action: "error"}}}
		w.Outputs = workflow.Outputs{{Name: "r", Source: "${recover.out}"}}
		res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil)})
		if !res.Success() || res.Status != RunDegraded {
			t.Fatalf("want degraded success, got %s %+v", res.Status, res.Failure)
		}
		if res.Outputs["r"] != "recovered from: disk full" {
			t.Errorf("recovery output %v", res.Outputs["r"])
		}
		if _, ran := res.Shared["next"]; ran {
			t.Error("the default successor must not run after an error")
		}
	})
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name      string
		params    map[string]any
		wantOK    bool
		wantCalls int64
	}{
		{"go error retried up to the type's attempts", map[string]any{"succeed_on": int64(3)}, true, 3},
		{"gives up after the type's attempts", map[string]any{"succeed_on": int64(4)}, false, 3},
		{"step retries override", map[string]any{"succeed_on": int64(5), "retries": int64(4)}, true, 5},
		{"retries: 0 means one attempt", map[string]any{"succeed_on": int64(2), "retries": int64(0)}, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int64
			res := Run(context.Background(), chain(step("f", "flaky", c.params)), nil, Options{Catalog: testCatalog(&calls)})
			if res.Success() != c.wantOK || calls.Load() != c.wantCalls {
				t.Fatalf("success=%v calls=%d, want %v %d (%+v)", res.Success(), calls.Load(), c.wantOK, c.wantCalls, res.Failure)
			}
		})
	}
	t.Run("error results retried when the step asks", func(t *testing.T) {
		var calls atomic.Int64
		res := Run(context.Background(), chain(step("f", "fail", map[string]any{"msg": "x", "retries": int64(2), "retry_wait": "1ms"})), nil, Options{Catalog: testCatalog(&calls)})
		if res.Success() || calls.Load() != 3 {
			t.Fatalf("calls=%d", calls.Load())
		}
	})
}

func TestBatchResultsInOrder(t *testing.T) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = int64(i)
	}
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			n := step("each", "echo", map[string]any{"value": "${item}", "text": "#${__index__}"})
			n.Batch = &workflow.Batch{Items: "${list}", Parallel: parallel, MaxConcurrent: 50}
			res := Run(context.Background(), chain(n), map[string]any{"list": items}, Options{Catalog: testCatalog(nil)})
			if !res.Success() {
				t.Fatalf("%+v", res.Failure)
			}
			out := res.Shared["each"].(map[string]any)
			results := out["results"].([]any)
			if len(results) != 1000 || out["count"] != int64(1000) || out["success_count"] != int64(1000) {
				t.Fatalf("count %v success %v", out["count"], out["success_count"])
			}
			for i, r := range results {
				m := r.(map[string]any)
				if m["out"] != int64(i) || m["item"] != int64(i) || m["text"] != fmt.Sprintf("#%d", i) {
					t.Fatalf("result %d out of order: %v", i, m)
				}
			}
			meta := out["batch_metadata"].(map[string]any)
			wantMode, wantMC := "sequential", any(nil)
			if parallel {
				wantMode, wantMC = "parallel", int64(50)
			}
			if meta["execution_mode"] != wantMode || meta["max_concurrent"] != wantMC || meta["parallel"] != parallel {
				t.Errorf("batch_metadata = %v", meta)
			}
		})
	}
}

func TestBatchErrorHandling(t *testing.T) {
	mk := func(mode string) *workflow.Workflow {
		n := step("each", "fail", map[string]any{"msg": "bad ${item}"})
		n.Batch = &workflow.Batch{Items: []any{"a", "b", "c"}, ErrorHandling: mode}
		return chain(n, step("after", "echo", map[string]any{"value": "${each.error_count}"}))
	}
	var calls atomic.Int64
	res := Run(context.Background(), mk("fail_fast"), nil, Options{Catalog: testCatalog(&calls)})
	if res.Success() || res.Failure.Message != "Batch 'each' failed at item [0]: bad a" || calls.Load() != 1 {
		t.Fatalf("fail_fast: %s %+v calls=%d", res.Status, res.Failure, calls.Load())
	}
	res = Run(context.Background(), mk("continue"), nil, Options{Catalog: testCatalog(nil)})
	if res.Status != RunDegraded || res.Shared["after"].(map[string]any)["out"] != int64(3) {
		t.Fatalf("continue: %s %v", res.Status, res.Shared["after"])
	}
}

func TestMappingsRenameKeysBothWays(t *testing.T) {
	w := chain(
		step("src", "echo", map[string]any{"value": "payload"}),
		step("use", "echo", nil),
	)
	w.Mappings = map[string]*workflow.Mapping{
		"src": {OutputMappings: map[string]string{"out": "summary"}},
		"use": {InputMappings: map[string]string{"value": "summary"}},
	}
	w.Outputs = workflow.Outputs{{Name: "got", Source: "${use.out}"}, {Name: "summary"}}
	res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil)})
	if !res.Success() {
		t.Fatalf("%+v", res.Failure)
	}
	if res.Outputs["got"] != "payload" {
		t.Errorf("input mapping: node param 'value' must be read from ${summary}: got %v", res.Outputs["got"])
	}
	if res.Outputs["summary"] != "payload" {
		t.Errorf("output mapping must publish src.out as ${summary}: got %v", res.Outputs["summary"])
	}
}

func TestNestedWorkflowInputsAndOutputs(t *testing.T) {
	dir := t.TempDir()
	child := `# Child
Doubles a word.
## Inputs
### word
The word.
- type: string
## Steps
### twice
Say it twice.
- type: echo
- value: ${word}-${word}
## Outputs
### doubled
Result.
- source: ${twice.out}
`
	if err := os.WriteFile(filepath.Join(dir, "child.pflow.md"), []byte(child), 0o644); err != nil {
		t.Fatal(err)
	}
	parentPath := filepath.Join(dir, "sub", "parent.pflow.md")
	w := chain(
		step("call", "workflow", map[string]any{"workflow_ref": "../child.pflow.md", "param_mapping": map[string]any{"word": "${w}"}}),
		step("show", "echo", map[string]any{"value": "${call.doubled}"}),
	)
	w.Source = &workflow.Source{Path: parentPath}
	res := Run(context.Background(), w, map[string]any{"w": "hi"}, Options{Catalog: testCatalog(nil)})
	if !res.Success() {
		t.Fatalf("%+v", res.Failure)
	}
	if got := res.Shared["show"].(map[string]any)["out"]; got != "hi-hi" {
		t.Errorf("nested output = %v", got)
	}
	if len(res.Steps[0].Children) != 1 {
		t.Errorf("nested steps must be reported as children: %+v", res.Steps[0])
	}

	t.Run("missing child input names it", func(t *testing.T) {
		w := chain(step("call", "workflow", map[string]any{"workflow_ref": "../child.pflow.md"}))
		w.Source = &workflow.Source{Path: parentPath}
		res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil)})
		if res.Success() || !contains(res.Failure.Message, "Workflow requires input 'word'") {
			t.Fatalf("%+v", res.Failure)
		}
	})
	t.Run("a path from a template is refused", func(t *testing.T) {
		// Validation refuses it first; the engine refuses it too.
		w := chain(step("call", "workflow", map[string]any{"workflow_ref": "${w}", "param_mapping": map[string]any{"word": "x"}}))
		w.Source = &workflow.Source{Path: parentPath}
		res := Run(context.Background(), w, map[string]any{"w": "../child.pflow.md"}, Options{Catalog: testCatalog(nil)})
		if res.Success() || !contains(res.Failure.Message, "workflow_ref must be written out, not a template") {
			t.Fatalf("%+v", res.Failure)
		}
	})
	t.Run("self reference is circular", func(t *testing.T) {
		self := filepath.Join(dir, "self.pflow.md")
		os.WriteFile(self, []byte("# Self\nLoops.\n## Steps\n### again\nRecurse.\n- type: workflow\n- workflow_ref: self.pflow.md\n"), 0o644)
		w, err := workflow.ParseFile(self)
		if err != nil {
			t.Fatal(err)
		}
		res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil)})
		if res.Success() || !contains(res.Failure.Message, "Circular workflow reference") {
			t.Fatalf("%+v", res.Failure)
		}
	})
}

func TestCancellationInterruptsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan *Result)
	go func() {
		done <- Run(ctx, chain(step("w", "wait", nil), step("after", "echo", nil)), nil, Options{Catalog: testCatalog(nil)})
	}()
	select {
	case res := <-done:
		if !res.Interrupted || res.Success() || res.Failure.Category != CategoryInterrupted {
			t.Fatalf("%+v", res)
		}
		// As docs/troubleshooting.md quotes it.
		if res.Failure.Message != "Workflow interrupted: the run was cancelled; every child process was stopped." {
			t.Fatalf("message: %q", res.Failure.Message)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after cancellation")
	}
}

type closer struct{ closed *atomic.Int64 }

func (c closer) Close() error { c.closed.Add(1); return nil }

func TestScopeResourcesSharedAndClosed(t *testing.T) {
	var opened, closed atomic.Int64
	cat := testCatalog(nil)
	cat["res"] = &node.Spec{Type: "res", Attempts: 1, Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
		_, err := r.Scope.Resource("k", func() (io.Closer, error) { opened.Add(1); return closer{&closed}, nil })
		return node.Ok(nil), err
	})}
	n := step("b", "res", nil)
	n.Batch = &workflow.Batch{Items: []any{1, 2, 3, 4, 5, 6}, Parallel: true}
	res := Run(context.Background(), chain(step("a", "res", nil), n), nil, Options{Catalog: cat})
	if !res.Success() {
		t.Fatal(res.Failure)
	}
	if opened.Load() != 1 || closed.Load() != 1 {
		t.Fatalf("one resource per run, closed at the end: opened %d closed %d", opened.Load(), closed.Load())
	}
}

func TestUnresolvedTemplates(t *testing.T) {
	w := chain(step("a", "echo", map[string]any{"value": "${missing} and ${other.x}"}))
	res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil)})
	if res.Success() || res.Failure.Category != CategoryTemplate ||
		!contains(res.Failure.Message, "${missing}") || !contains(res.Failure.Message, "${other.x}") {
		t.Fatalf("strict mode must report every unresolved variable: %+v", res.Failure)
	}
	res = Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil), Permissive: true})
	if res.Status != RunDegraded {
		t.Fatalf("permissive: %s", res.Status)
	}
}

func TestParamCoercionToDeclaredTypes(t *testing.T) {
	w := chain(
		step("a", "echo", map[string]any{"value": `{"k": 1}`}),
		step("b", "echo", map[string]any{"obj": "${a.out}", "text": "${a.out}"}),
	)
	w.Nodes[1].Params["text"] = map[string]any{"x": []any{int64(1)}}
	res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil)})
	if !res.Success() {
		t.Fatal(res.Failure)
	}
	b := res.Shared["b"].(map[string]any)
	if m, ok := b["obj"].(map[string]any); !ok || m["k"] != int64(1) {
		t.Errorf("JSON text into a dict param must be parsed: %#v", b["obj"])
	}
	if b["text"] != `{"x":[1]}` {
		t.Errorf("a dict into a str param must become JSON text: %#v", b["text"])
	}
	w2 := chain(step("b", "echo", map[string]any{"obj": "{'bad': 1}"}))
	res = Run(context.Background(), w2, nil, Options{Catalog: testCatalog(nil)})
	if res.Success() || !contains(res.Failure.Message, "malformed JSON") {
		t.Fatalf("%+v", res.Failure)
	}
}

func TestPrepareInputs(t *testing.T) {
	f := false
	w := &workflow.Workflow{Inputs: workflow.Inputs{
		{Name: "code", Type: "string"},
		{Name: "n", Type: "integer"},
		{Name: "flag", Type: "boolean", Required: &f, Default: true},
		{Name: "opt", Required: &f},
		{Name: "from_env", Type: "string", Env: "FROM_ENV_VAR"},
		{Name: "from_settings", Type: "number"},
		{Name: "github_token", Type: "string", Env: "GITHUB_TOKEN"},
		// A variable that merely shares the input's name is not read.
		{Name: "path", Type: "string", Required: &f},
	}}
	env := EnvLookup{
		Process: func(k string) (string, bool) {
			v, ok := map[string]string{"FROM_ENV_VAR": "E", "GITHUB_TOKEN": "T", "PATH": "/usr/bin", "path": "/bin"}[k]
			return v, ok
		},
		Settings: func(k string) (string, bool) { return "2.5", k == "from_settings" },
	}
	p, errs := PrepareInputs(w, map[string]any{"code": "007", "n": "42"}, env)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]any{"code": "007", "n": int64(42), "flag": true, "opt": nil, "from_env": "E", "from_settings": 2.5, "github_token": "T", "path": nil}
	for k, v := range want {
		if p.Values[k] != v {
			t.Errorf("%s = %#v, want %#v", k, p.Values[k], v)
		}
	}
	_, errs = PrepareInputs(w, map[string]any{"n": "forty"}, EnvLookup{})
	if len(errs) != 5 {
		t.Fatalf("want every problem at once, got %v", errs)
	}
	if errs[0].Message != "Workflow requires input 'code': No description provided" || errs[1].Message != `Input 'n' expects an integer, got str "forty"` {
		t.Errorf("messages: %v", errs)
	}
}

func TestEndlessLoopIsBounded(t *testing.T) {
	w := &workflow.Workflow{Nodes: []*workflow.Node{step("a", "fail", map[string]any{"msg": "x"})},
		Edges: []workflow.Edge{{From: "a", To: "a", Action: "error"}}}
	res := Run(context.Background(), w, nil, Options{Catalog: testCatalog(nil), MaxSteps: 20})
	if res.Success() || !contains(res.Failure.Message, "endless loop") {
		t.Fatalf("%+v", res.Failure)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestNestedInlineIRKeepsItsOwnTemplates(t *testing.T) {
	child := map[string]any{
		"inputs":  map[string]any{"topic": map[string]any{"type": "string"}},
		"nodes":   []any{map[string]any{"id": "say", "type": "echo", "params": map[string]any{"value": "about ${topic}"}}},
		"outputs": map[string]any{"line": map[string]any{"source": "${say.out}"}},
	}
	w := chain(step("call", "workflow", map[string]any{"workflow_ir": child, "param_mapping": map[string]any{"topic": "${t}"}}))
	w.Outputs = workflow.Outputs{{Name: "line", Source: "${call.line}"}}
	res := Run(context.Background(), w, map[string]any{"t": "go"}, Options{Catalog: testCatalog(nil)})
	if !res.Success() || res.Outputs["line"] != "about go" {
		t.Fatalf("%s %+v %v", res.Status, res.Failure, res.Outputs)
	}
}

func TestNodePanicFailsTheStepWithoutAStackTrace(t *testing.T) {
	cat := testCatalog(nil)
	cat["bad"] = &node.Spec{Type: "bad", Attempts: 1, Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
		var m map[string]int
		//lint:ignore SA5000 the node is meant to panic with a runtime error
		m["x"] = 1
		return nil, nil
	})}
	res := Run(context.Background(), chain(step("b", "bad", nil)), nil, Options{Catalog: cat})
	if res.Success() || !strings.Contains(res.Failure.Message, "internal error in node type 'bad'") ||
		strings.Contains(res.Failure.Message, "goroutine") || strings.Contains(res.Failure.Message, ".go:") {
		t.Fatalf("%+v", res.Failure)
	}
}

// A required input is never filled from a variable that merely shares
// its name; the error says how to read it when one is set.
func TestInputsNeverFromArbitraryEnv(t *testing.T) {
	w := &workflow.Workflow{Inputs: workflow.Inputs{{Name: "token", Type: "string"}, {Name: "home"}}}
	env := EnvLookup{Process: func(k string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "secret", "home": "/root"}[k]
		return v, ok
	}}
	_, errs := PrepareInputs(w, nil, env)
	if len(errs) != 2 {
		t.Fatalf("want both inputs missing, got %v", errs)
	}
	if want := "Workflow requires input 'token': No description provided ($TOKEN is set, but an input reads the environment only when it declares '- env: TOKEN')"; errs[0].Message != want {
		t.Errorf("got  %s\nwant %s", errs[0].Message, want)
	}
	if !strings.Contains(errs[1].Message, "($home is set") {
		t.Errorf("got %s", errs[1].Message)
	}
	w.Inputs[0].Env, w.Inputs[1].Env = "TOKEN", "home"
	p, errs := PrepareInputs(w, nil, env)
	if len(errs) != 0 || p.Values["token"] != "secret" || p.Sources["token"] != FromEnv || p.Values["home"] != "/root" {
		t.Fatalf("declared env: %v %v %v", errs, p.Values, p.Sources)
	}
}

// The engine knows no node by name: a node type's registry
// data reaches its node as Request.Extra, and nothing is injected into
// the params the step's record, trace and digest read.
func TestNodeDataTravelsInTheRequestNotInParams(t *testing.T) {
	var got *node.Request
	cat := testCatalog(nil)
	cat["mcp-srv-tool"] = &node.Spec{Type: "mcp-srv-tool", Attempts: 1,
		Extra:     map[string]any{"mcp_server": "srv", "mcp_tool": "tool"},
		Interface: node.Interface{Params: []node.Field{{Key: "q", Type: "str"}}},
		Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			got = r
			return node.Ok(nil), nil
		})}
	res := Run(context.Background(), chain(step("a", "mcp-srv-tool", map[string]any{"q": "x"})), nil, Options{Catalog: cat})
	if !res.Success() {
		t.Fatal(res.Failure)
	}
	if got.Extra["mcp_server"] != "srv" || got.Extra["mcp_tool"] != "tool" {
		t.Errorf("extra %v", got.Extra)
	}
	if len(got.Params) != 1 || got.Params["q"] != "x" {
		t.Errorf("params must be the step's own: %v", got.Params)
	}
	if p := res.Steps[0].Params; len(p) != 1 {
		t.Errorf("the step's recorded params must be the step's own: %v", p)
	}
}

// A required input read from an environment variable that is not set
// names the variable; 'pflow settings set-env' of that variable fills it
// whatever the input is called.
func TestEnvInputNamesItsVariable(t *testing.T) {
	w := &workflow.Workflow{Inputs: workflow.Inputs{{Name: "token", Type: "string", Description: "A GitHub token.", Env: "GITHUB_TOKEN"}}}
	_, errs := PrepareInputs(w, nil, EnvLookup{Process: func(string) (string, bool) { return "", false }, Settings: func(string) (string, bool) { return "", false }})
	if len(errs) != 1 || errs[0].Env != "GITHUB_TOKEN" || !errs[0].Missing ||
		errs[0].Message != "Workflow requires input 'token': A GitHub token. (it is read from the environment variable GITHUB_TOKEN, which is not set)" {
		t.Fatalf("errors: %+v", errs)
	}
	settings := func(k string) (string, bool) { return "from-settings", k == "GITHUB_TOKEN" }
	p, errs := PrepareInputs(w, nil, EnvLookup{Process: func(string) (string, bool) { return "", false }, Settings: settings})
	if len(errs) > 0 || p.Values["token"] != "from-settings" || p.Sources["token"] != FromSettings {
		t.Fatalf("set-env GITHUB_TOKEN: %v %v", p.Values, errs)
	}
}

// A batch summary as traces (every failed item, with the item) and run
// records (the first few, without it) write it.
func TestBatchSummaryValue(t *testing.T) {
	s := &BatchSummary{Total: 3, Success: 1, Failed: 2, Parallel: true,
		Errors: []BatchError{{Index: 0, Item: "a", Error: "x"}, {Index: 2, Item: int64(7), Error: "y"}}}
	all := map[string]any{"total": int64(3), "success": int64(1), "failed": int64(2), "parallel": true, "errors": []any{
		map[string]any{"index": int64(0), "item": "a", "error": "x"}, map[string]any{"index": int64(2), "item": int64(7), "error": "y"}}}
	if got := s.Value(len(s.Errors), true); !reflect.DeepEqual(got, all) {
		t.Errorf("Value(all, items) = %v", got)
	}
	first := map[string]any{"total": int64(3), "success": int64(1), "failed": int64(2), "parallel": true, "errors": []any{
		map[string]any{"index": int64(0), "error": "x"}}}
	if got := s.Value(1, false); !reflect.DeepEqual(got, first) {
		t.Errorf("Value(1, no items) = %v", got)
	}
	if got := (&BatchSummary{Total: 1, Success: 1}).Value(20, false); got["errors"] != nil {
		t.Errorf("no failures: %v", got)
	}
}
