package validate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/workflow"
)

// fakeCatalog is a small catalog with shell-like and http-like specs.
type fakeCatalog map[string]*node.Spec

func (c fakeCatalog) Lookup(t string) (*node.Spec, bool) { s, ok := c[t]; return s, ok }
func (c fakeCatalog) Types() []string {
	var out []string
	for k := range c {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func testCatalog() fakeCatalog {
	specs := []*node.Spec{
		{Type: "shell", Interface: node.Interface{
			Params: []node.Field{
				{Key: "command", Type: "str", Required: true, Description: "Shell command."},
				{Key: "stdin", Type: "any"},
				{Key: "timeout", Type: "int", Default: int64(30)},
				{Key: "env", Type: "dict"},
				{Key: "ignore_errors", Type: "bool"},
			},
			Outputs: []node.Field{
				{Key: "stdout", Type: "str"}, {Key: "stderr", Type: "str"}, {Key: "exit_code", Type: "int"},
			},
		}},
		{Type: "http", Interface: node.Interface{
			Params: []node.Field{
				{Key: "url", Type: "str", Required: true},
				{Key: "method", Type: "str"},
				{Key: "body", Type: "dict|list|str"},
				{Key: "headers", Type: "dict"},
				{Key: "timeout", Type: "int"},
			},
			Outputs: []node.Field{
				{Key: "response", Type: "dict|str"},
				{Key: "status_code", Type: "int"},
				{Key: "response_headers", Type: "dict", Structure: []node.Field{{Key: "content-type", Type: "str"}}},
			},
		}},
		{Type: "git-log", Interface: node.Interface{
			Params: []node.Field{{Key: "since", Type: "str"}},
			Outputs: []node.Field{
				{Key: "commits", Type: "list[dict]", Structure: []node.Field{
					{Key: "sha", Type: "str"}, {Key: "author", Type: "str"}, {Key: "files", Type: "list[str]"},
				}},
				{Key: "summary", Type: "dict", Structure: []node.Field{{Key: "count", Type: "int"}, {Key: "authors", Type: "list[str]"}}},
			},
		}},
		{Type: "llm", Interface: node.Interface{
			Params:  []node.Field{{Key: "prompt", Type: "str", Required: true}, {Key: "model", Type: "str"}},
			Outputs: []node.Field{{Key: "response", Type: "any"}},
		}},
		{Type: "mcp-slack-send-message", Interface: node.Interface{
			Params:  []node.Field{{Key: "channel", Type: "str", Required: true}, {Key: "text", Type: "str", Required: true}},
			Outputs: []node.Field{{Key: "result", Type: "any"}, {Key: "error", Type: "str"}},
		}},
	}
	c := fakeCatalog{}
	for _, s := range specs {
		c[s.Type] = s
	}
	return c
}

// nd builds a node; lines are assigned by wf.
func nd(id, typ string, params map[string]any) *workflow.Node {
	return &workflow.Node{ID: id, Type: typ, Params: params}
}

// wf builds a linear workflow: node i is on line 10*(i+1).
func wf(nodes ...*workflow.Node) *workflow.Workflow {
	w := &workflow.Workflow{IRVersion: workflow.IRVersion, Nodes: nodes, Edges: []workflow.Edge{}}
	for i, n := range nodes {
		n.Line = 10 * (i + 1)
		if i > 0 {
			w.Edges = append(w.Edges, workflow.Edge{From: nodes[i-1].ID, To: n.ID})
		}
	}
	return w
}

func input(name string, line int) *workflow.Input {
	return &workflow.Input{Name: name, Description: "The " + name + ".", Line: line}
}

func run(t *testing.T, w *workflow.Workflow) (errs, warns []Diagnostic) {
	t.Helper()
	return Validate(context.Background(), w, Options{Catalog: testCatalog()})
}

func dump(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "--- [%s] node=%q param=%q line=%d\n%s\nHINT: %s\n", d.Severity, d.NodeID, d.Param, d.Line, d.Message, d.Hint)
	}
	return b.String()
}

// find returns the one diagnostic whose message starts with prefix.
func find(t *testing.T, ds []Diagnostic, prefix string) Diagnostic {
	t.Helper()
	var hits []Diagnostic
	for _, d := range ds {
		if strings.HasPrefix(d.Message, prefix) {
			hits = append(hits, d)
		}
	}
	if len(hits) != 1 {
		t.Fatalf("want exactly one diagnostic starting with %q, got %d in:\n%s", prefix, len(hits), dump(ds))
	}
	return hits[0]
}

func hasLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, l) {
			t.Errorf("missing %q in:\n%s", l, text)
		}
	}
}

func TestValidWorkflowHasNoFindings(t *testing.T) {
	w := wf(
		nd("fetch", "http", map[string]any{"url": "https://api/${user}", "headers": map[string]any{"Accept": "application/json"}}),
		nd("log", "git-log", map[string]any{"since": "${fetch.response.since}"}),
		nd("show", "shell", map[string]any{
			"command": "echo ${log.commits[0].sha} ${log.summary.count} ${fetch.status_code} $${HOME} ${HOME:-x}",
			"stdin":   "${log.commits}",
		}),
		nd("say", "llm", map[string]any{"prompt": "Summarize: ${show.stdout} ${log.commits[0].files[1]} ${fetch.response_headers.content-type}"}),
	)
	w.Inputs = workflow.Inputs{input("user", 3)}
	w.Outputs = workflow.Outputs{{Name: "summary", Source: "${say.response}", Line: 50}, {Name: "plain", Source: "show.stdout", Line: 53}}
	errs, warns := run(t, w)
	if len(errs) != 0 || len(warns) != 0 {
		t.Fatalf("want no findings, got:\n%s%s", dump(errs), dump(warns))
	}
}

func TestDataFlowErrors(t *testing.T) {
	tests := []struct {
		name   string
		w      func() *workflow.Workflow
		prefix string
		node   string
		param  string
		line   int
		lines  []string
	}{
		{
			name: "undefined input with did-you-mean",
			w: func() *workflow.Workflow {
				w := wf(nd("a", "shell", map[string]any{"command": "echo ${usr}"}))
				w.Inputs = workflow.Inputs{input("user", 3)}
				return w
			},
			prefix: "Node 'a' references undefined input '${usr}' in parameter 'command'",
			node:   "a", param: "command", line: 10,
			lines: []string{" - did you mean '${user}'?", "write $usr or $${usr}"},
		},
		{
			name:   "shell variable written as a template",
			w:      func() *workflow.Workflow { return wf(nd("a", "shell", map[string]any{"command": "cd ${HOME}"})) },
			prefix: "Node 'a' references undefined input '${HOME}' in parameter 'command'",
			node:   "a", param: "command", line: 10,
			lines: []string{"write $HOME or $${HOME}"},
		},
		{
			name: "non-existent node",
			w: func() *workflow.Workflow {
				return wf(nd("fetch", "http", map[string]any{"url": "u"}), nd("b", "shell", map[string]any{"command": "echo ${fetsh.response}"}))
			},
			prefix: "Node 'b' references non-existent node 'fetsh' in parameter 'command'",
			node:   "b", param: "command", line: 20,
			lines: []string{"Did you mean '${fetch.response}'?"},
		},
		{
			name: "forward reference",
			w: func() *workflow.Workflow {
				return wf(nd("a", "shell", map[string]any{"command": "echo ${b.stdout}"}), nd("b", "shell", map[string]any{"command": "true"}))
			},
			prefix: "Node 'a' references 'b' which comes after it in execution order (position 1 >= 0)",
			node:   "a", param: "command", line: 10,
			lines: []string{"move step 'b' above 'a'"},
		},
		{
			name: "self reference",
			w: func() *workflow.Workflow {
				return wf(nd("a", "shell", map[string]any{"command": "echo ${a.stdout}"}))
			},
			prefix: "Node 'a' references its own output ${a.stdout} in parameter 'command'",
			node:   "a", param: "command", line: 10,
		},
		{
			name: "nested dict params are scanned",
			w: func() *workflow.Workflow {
				return wf(nd("a", "http", map[string]any{"url": "u", "headers": map[string]any{"X-Token": "${token}", "X": []any{"${b.stdout}"}}}), nd("b", "shell", map[string]any{"command": "true"}))
			},
			prefix: "Node 'a' references undefined input '${token}' in parameter 'headers'",
			node:   "a", param: "headers", line: 10,
		},
		{
			name: "batch alias outside its batch",
			w: func() *workflow.Workflow {
				a := nd("a", "shell", map[string]any{"command": "echo ${file}"})
				a.Batch = &workflow.Batch{Items: []any{"x", "y"}, As: "file"}
				return wf(a, nd("b", "shell", map[string]any{"command": "echo ${file}"}))
			},
			prefix: "Node 'b' references ${file} in parameter 'command', but 'file' only exists inside batch step 'a'",
			node:   "b", param: "command", line: 20,
			lines: []string{"${a.results[0]...}"},
		},
		{
			name: "__index__ outside batch",
			w: func() *workflow.Workflow {
				return wf(nd("a", "shell", map[string]any{"command": "echo ${__index__}"}))
			},
			prefix: "Node 'a' references undefined input '${__index__}' in parameter 'command'",
			node:   "a", param: "command", line: 10,
		},
		{
			name: "branch that does not run before",
			w: func() *workflow.Workflow {
				w := wf(nd("a", "shell", map[string]any{"command": "true"}), nd("b", "shell", map[string]any{"command": "echo ${rescue.stdout}"}))
				r := nd("rescue", "shell", map[string]any{"command": "echo failed"})
				r.Line = 30
				w.Nodes = append(w.Nodes, r)
				w.Edges = append(w.Edges, workflow.Edge{From: "a", To: "rescue", Action: "error"})
				return w
			},
			prefix: "Node 'b' references 'rescue', which is not on any path that runs before 'b'",
			node:   "b", param: "command", line: 20,
		},
		{
			name: "cycle through default edges",
			w: func() *workflow.Workflow {
				w := wf(nd("a", "shell", map[string]any{"command": "true"}), nd("b", "shell", map[string]any{"command": "true"}))
				w.Edges = append(w.Edges, workflow.Edge{From: "b", To: "a"})
				return w
			},
			prefix: "Data flow error: Circular dependency detected involving nodes: a, b",
			node:   "a", line: 10,
		},
		{
			name: "stdin on several inputs",
			w: func() *workflow.Workflow {
				w := wf(nd("a", "shell", map[string]any{"command": "echo ${x} ${y}"}))
				x, y := input("x", 3), input("y", 6)
				x.Stdin, y.Stdin = true, true
				w.Inputs = workflow.Inputs{x, y}
				return w
			},
			prefix: `Multiple inputs marked with "stdin": true: x, y. Only one input can receive piped stdin.`,
			line:   6,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs, _ := run(t, tc.w())
			d := find(t, errs, tc.prefix)
			if d.NodeID != tc.node || d.Param != tc.param || d.Line != tc.line {
				t.Errorf("location = node %q param %q line %d; want %q %q %d", d.NodeID, d.Param, d.Line, tc.node, tc.param, tc.line)
			}
			if d.Severity != SeverityError {
				t.Errorf("severity %q", d.Severity)
			}
			hasLines(t, d.Message+"\n"+d.Hint, tc.lines...)
		})
	}
}

func TestActionEdgeLoopIsNotACycle(t *testing.T) {
	w := wf(
		nd("a", "shell", map[string]any{"command": "true"}),
		nd("b", "http", map[string]any{"url": "http://127.0.0.1/${a.stdout}"}),
	)
	w.Edges = append(w.Edges, workflow.Edge{From: "b", To: "a", Action: "rate_limited"})
	errs, _ := run(t, w)
	if len(errs) != 0 {
		t.Fatalf("a loop closed by an action edge is allowed:\n%s", dump(errs))
	}
}

func TestDoesNotOutputListsAvailableOutputs(t *testing.T) {
	w := wf(
		nd("fetch", "http", map[string]any{"url": "u"}),
		nd("use", "shell", map[string]any{"command": "echo ${fetch.status}"}),
	)
	errs, _ := run(t, w)
	d := find(t, errs, "Node 'fetch' (type: http) does not output 'status'")
	if d.NodeID != "use" || d.Param != "command" || d.Line != 20 {
		t.Errorf("location: %+v", d)
	}
	hasLines(t, d.Message,
		"Referenced as ${fetch.status} in parameter 'command' of node 'use'.",
		"\n\nAvailable outputs from 'fetch':\n  ✓ ${fetch.response} (dict|str)\n  ✓ ${fetch.status_code} (int)\n  ✓ ${fetch.response_headers} (dict)\n  ✓ ${fetch.response_headers.content-type} (str)\n  ✓ ${fetch.error} (str)",
		"Did you mean: ${fetch.status_code}?",
	)
	if d.Hint != "Change ${fetch.status} to ${fetch.status_code}" {
		t.Errorf("hint = %q", d.Hint)
	}
}

func TestStructuredListOutputs(t *testing.T) {
	w := wf(
		nd("log", "git-log", nil),
		nd("a", "shell", map[string]any{"command": "echo ${log.commits[0].sha} ${log.commits[1].files[0]}"}),
		nd("b", "shell", map[string]any{"command": "echo ${log.commits.sha}"}),
		nd("c", "shell", map[string]any{"command": "echo ${log.commits[0].shaa}"}),
		nd("d", "shell", map[string]any{"command": "echo ${log.summary.count.x}"}),
	)
	errs, warns := run(t, w)
	for _, d := range append(errs, warns...) {
		if d.NodeID == "a" {
			t.Errorf("indexing a structured list must validate: %s", d.Message)
		}
	}
	d := find(t, errs, "Invalid template ${log.commits.sha}: ${log.commits} is a list (list[dict]); pick an item first, e.g. ${log.commits[0].sha}")
	if d.NodeID != "b" {
		t.Errorf("node %q", d.NodeID)
	}
	hasLines(t, d.Message, "  ✓ ${log.commits[0].sha} (str)", "  ✓ ${log.summary.authors} (list[str])")
	w2 := find(t, warns, "Template ${log.commits[0].shaa} in node 'c' parameter 'command': 'shaa' is not among the documented fields of ${log.commits[0]} (sha, author, files)")
	hasLines(t, w2.Hint, "Did you mean ${log.commits[0].sha}?")
	find(t, errs, "Invalid template ${log.summary.count.x}: ${log.summary.count} is int and has no field 'x'")
}

func TestStringOutputsAreRuntimeValidated(t *testing.T) {
	w := wf(
		nd("src", "shell", map[string]any{"command": "cat data.json"}),
		nd("use", "shell", map[string]any{"command": "echo ${src.stdout.items[0]}"}),
	)
	errs, warns := run(t, w)
	if len(errs) != 0 {
		t.Fatalf("str traversal is not an error:\n%s", dump(errs))
	}
	d := find(t, warns, "Template ${src.stdout.items[0]} in node 'use' parameter 'command' uses runtime validation: ${src.stdout} is str (structure unknown at validation time)")
	if d.NodeID != "use" || d.Line != 20 {
		t.Errorf("location %+v", d)
	}
}

func TestAnyOutputsAcceptEveryPath(t *testing.T) {
	w := wf(
		nd("ask", "llm", map[string]any{"prompt": "hi"}),
		nd("use", "shell", map[string]any{"command": "echo ${ask.response.a[3].b}"}),
	)
	errs, warns := run(t, w)
	if len(errs)+len(warns) != 0 {
		t.Fatalf("any-typed outputs accept every path:\n%s%s", dump(errs), dump(warns))
	}
}

func TestBareNodeID(t *testing.T) {
	w := wf(nd("fetch", "http", map[string]any{"url": "u"}), nd("use", "shell", map[string]any{"command": "echo ${fetch}"}))
	errs, _ := run(t, w)
	d := find(t, errs, "Invalid template ${fetch} - node ID 'fetch' requires an output key (e.g., ${fetch.response})")
	hasLines(t, d.Message, "Available outputs from 'fetch':")
}

func TestBatchOutputs(t *testing.T) {
	mk := func(cmd string) *workflow.Workflow {
		b := nd("each", "shell", map[string]any{"command": "echo ${item} ${__index__} ${prev.results[${__index__}].stdout}"})
		b.Batch = &workflow.Batch{Items: "${list.stdout}"}
		prev := nd("prev", "shell", map[string]any{"command": "echo ${item}"})
		prev.Batch = &workflow.Batch{Items: []any{"a", "b"}}
		return wf(nd("list", "shell", map[string]any{"command": "ls"}), prev, b, nd("use", "shell", map[string]any{"command": cmd}))
	}
	errs, warns := run(t, mk("echo ${each.results[0].stdout} ${each.count} ${each.errors[0].error} ${each.results[1].item}"))
	if len(errs)+len(warns) != 0 {
		t.Fatalf("batch outputs must validate:\n%s%s", dump(errs), dump(warns))
	}
	errs, _ = run(t, mk("echo ${each.stdout}"))
	d := find(t, errs, "Node 'each' uses batch processing.\n'stdout' is not available at the top level — batch wraps outputs in a 'results' array.")
	hasLines(t, d.Message, "${each.results}", "→ list of all results", "${each.results[0].stdout} → first item's stdout", "  ✓ ${each.success_count} (int)", "  ✓ ${each.results[0].stdout} (str)")
	if d.NodeID != "use" || d.Line != 40 {
		t.Errorf("location %+v", d)
	}
	errs, _ = run(t, mk("echo ${each.result}"))
	find(t, errs, "Node 'each' (type: shell) does not output 'result'")
}

func TestBatchItemsChecks(t *testing.T) {
	b := nd("each", "shell", map[string]any{"command": "echo ${item}"})
	b.Batch = &workflow.Batch{Items: "${fetch.status_code}"}
	c := nd("self", "shell", map[string]any{"command": "echo ${x}"})
	c.Batch = &workflow.Batch{Items: "${x}", As: "x"}
	w := wf(nd("fetch", "http", map[string]any{"url": "u"}), b, c)
	errs, _ := run(t, w)
	d := find(t, errs, "Batch items of node 'each' must be a list: ${fetch.status_code} has type 'int'")
	if d.Param != "batch.items" || d.Line != 20 {
		t.Errorf("location %+v", d)
	}
	find(t, errs, "Node 'self' uses ${x} in batch items, but the batch item only exists while each item runs")
}

func TestOutputSources(t *testing.T) {
	w := wf(nd("fetch", "http", map[string]any{"url": "u"}))
	w.Outputs = workflow.Outputs{
		{Name: "bad_node", Source: "${fecth.response}", Line: 30},
		{Name: "bad_key", Source: "${fetch.nope}", Line: 33},
		{Name: "plain_bad_key", Source: "fetch.statuscode", Line: 36},
		{Name: "ok", Source: "${fetch.status_code}", Line: 39},
	}
	errs, _ := run(t, w)
	d := find(t, errs, "Output 'bad_node' source references non-existent node 'fecth'")
	hasLines(t, d.Message, "Template: ${fecth.response}", "Available nodes in workflow:\n  ✓ fetch", "Did you mean one of these?\n  - fetch")
	hasLines(t, d.Hint, "Suggested fix:", `Change: "${fecth.response}"`, `To: "${fetch.response}"`)
	if d.Line != 30 || d.NodeID != "" {
		t.Errorf("location %+v", d)
	}
	k := find(t, errs, "Node 'fetch' (type: http) does not output 'nope'")
	hasLines(t, k.Message, "Referenced as ${fetch.nope} in the source of output 'bad_key'.")
	if k.Line != 33 {
		t.Errorf("line %d", k.Line)
	}
	p := find(t, errs, "Node 'fetch' (type: http) does not output 'statuscode'")
	if p.Line != 36 || p.Hint != "Change ${fetch.statuscode} to ${fetch.status_code}" {
		t.Errorf("got %+v", p)
	}
	if len(errs) != 3 {
		t.Errorf("want 3 errors:\n%s", dump(errs))
	}
}

func TestUnknownNodeTypeDidYouMean(t *testing.T) {
	w := wf(nd("a", "shel", map[string]any{"command": "true"}), nd("b", "mcp-slack-send-mesage", nil), nd("c", "workflow", map[string]any{"workflow_name": "x"}))
	errs, _ := run(t, w)
	d := find(t, errs, "Unknown node type: 'shel'")
	if d.NodeID != "a" || d.Line != 10 || !strings.HasPrefix(d.Advice(pferr.Person), "Did you mean 'shell'?") {
		t.Errorf("got %+v", d)
	}
	// The fix is data: where (step, param, line), what to write instead,
	// the alternatives, and the action worded for each reader.
	f := d.Fixes[0]
	if f.Step != "a" || f.Param != "type" || f.Line != 10 || f.Replacement != "shell" || f.Alternatives[0] != "shell" {
		t.Errorf("fix %+v", f)
	}
	if got := d.Advice(pferr.Agent); !strings.Contains(got, "Call registry_list to see the available node types.") || strings.Contains(got, "pflow") {
		t.Errorf("an agent reads %q", got)
	}
	m := find(t, errs, "Unknown node type: 'mcp-slack-send-mesage'")
	hasLines(t, m.Advice(pferr.Person), "Did you mean 'mcp-slack-send-message'?", "pflow mcp sync")
	if got := m.Advice(pferr.Agent); !strings.Contains(got, "ask the user to run 'pflow mcp sync <server>'") {
		t.Errorf("an agent is not told to ask its user: %q", got)
	}
	for _, e := range errs {
		if e.NodeID == "c" {
			t.Errorf("workflow is always a known type: %s", e.Message)
		}
	}
}

func TestTemplateChecks(t *testing.T) {
	tests := []struct {
		name   string
		w      func() *workflow.Workflow
		prefix string
		sev    Severity
		lines  []string
	}{
		{
			name: "unused inputs",
			w: func() *workflow.Workflow {
				w := wf(nd("a", "shell", map[string]any{"command": "echo ${used}"}))
				w.Inputs = workflow.Inputs{input("used", 2), input("spare", 5), input("other", 8)}
				return w
			},
			prefix: "Declared input(s) never used as template variable: spare, other",
			sev:    SeverityError,
		},
		{
			name:   "malformed",
			w:      func() *workflow.Workflow { return wf(nd("a", "shell", map[string]any{"command": "echo ${} ${x.y"})) },
			prefix: "Malformed template syntax in node 'a' parameter 'command': Found 2 '${' but only 0 valid template(s). Check for missing '}' or empty templates like '${}'",
			sev:    SeverityError,
			lines:  []string{"'${}' is empty", "'${x.y' has no closing '}'", "write '$${'"},
		},
		{
			name: "type mismatch",
			w: func() *workflow.Workflow {
				return wf(nd("src", "http", map[string]any{"url": "u"}), nd("b", "http", map[string]any{"url": "u", "timeout": "${src.response_headers}"}))
			},
			prefix: "Type mismatch in node 'b' parameter 'timeout': template ${src.response_headers} has type 'dict' but parameter expects 'int'",
			sev:    SeverityError,
		},
		{
			name: "str to int is converted at run time",
			w: func() *workflow.Workflow {
				return wf(nd("src", "shell", map[string]any{"command": "echo 5"}), nd("b", "http", map[string]any{"url": "u", "timeout": "${src.stdout}"}))
			},
			prefix: "Type mismatch in node 'b' parameter 'timeout': template ${src.stdout} has type 'str' but parameter expects 'int' (converted at run time)",
			sev:    SeverityWarning,
		},
		{
			name: "dict into str lists fields with correct type",
			w: func() *workflow.Workflow {
				return wf(nd("log", "git-log", nil), nd("b", "http", map[string]any{"url": "u", "timeout": "${log.summary}"}))
			},
			prefix: "Type mismatch in node 'b' parameter 'timeout': template ${log.summary} has type 'dict' but parameter expects 'int'",
			sev:    SeverityError,
			lines:  []string{"💡 Available fields with correct type:\n  ${log.summary.count} (int)"},
		},
		{
			name: "shell guard",
			w: func() *workflow.Workflow {
				return wf(nd("log", "git-log", nil), nd("sh", "shell", map[string]any{"command": "echo ${log.summary} | wc"}))
			},
			prefix: "Shell node 'sh': cannot use ${log.summary} (type: dict) in command parameter.",
			sev:    SeverityError,
			lines:  []string{"PROBLEM:", "CURRENT: echo ${log.summary} | wc", "FIX OPTIONS:", "(e.g. ${log.summary.count})", "'- stdin: ${log.summary}'", "'${log.summary}'"},
		},
		{
			name: "unknown param warning",
			w: func() *workflow.Workflow {
				return wf(nd("a", "shell", map[string]any{"command": "true", "comand": "x", "retries": int64(2)}))
			},
			prefix: "Node 'a' (shell): unknown parameter 'comand'. Did you mean 'command'?",
			sev:    SeverityError,
		},
		{
			name:   "missing required param",
			w:      func() *workflow.Workflow { return wf(nd("a", "http", map[string]any{"method": "GET"})) },
			prefix: "Node 'a' (http): missing required parameter 'url'",
			sev:    SeverityError,
			lines:  []string{"Add '- url: ...' to step 'a'."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs, warns := run(t, tc.w())
			list := errs
			if tc.sev == SeverityWarning {
				list = warns
			}
			d := find(t, list, tc.prefix)
			hasLines(t, d.Message+"\n"+d.Hint, tc.lines...)
		})
	}
}

func TestShellGuardQuotedEscapeAndStdin(t *testing.T) {
	w := wf(nd("log", "git-log", nil), nd("sh", "shell", map[string]any{"command": "echo '${log.summary}' | jq .count", "stdin": "${log.commits}"}))
	errs, _ := run(t, w)
	if len(errs) != 0 {
		t.Fatalf("'${x}' is the escape hatch and stdin takes any:\n%s", dump(errs))
	}
}

func TestEscapedTemplatesAreNotReferences(t *testing.T) {
	w := wf(nd("a", "shell", map[string]any{"command": "echo $${nothing.here} $${undefined}"}))
	errs, warns := run(t, w)
	if len(errs)+len(warns) != 0 {
		t.Fatalf("$${x} is literal text:\n%s%s", dump(errs), dump(warns))
	}
}

func TestRequiredInputNotProvided(t *testing.T) {
	w := wf(nd("a", "shell", map[string]any{"command": "echo ${name} ${opt}"}))
	f := false
	opt := input("opt", 6)
	opt.Required = &f
	w.Inputs = workflow.Inputs{input("name", 3), opt}
	errs, _ := Validate(context.Background(), w, Options{Catalog: testCatalog(), Provided: map[string]any{}})
	d := find(t, errs, "Required input '${name}' not provided - The name. (required)")
	if d.Line != 3 {
		t.Errorf("line %d", d.Line)
	}
	if len(errs) != 1 {
		t.Errorf("optional inputs are fine:\n%s", dump(errs))
	}
	// Validate-only mode: every declared input counts as provided.
	errs, _ = Validate(context.Background(), w, Options{Catalog: testCatalog()})
	if len(errs) != 0 {
		t.Errorf("nil Provided means validate-only:\n%s", dump(errs))
	}
}

func TestMappings(t *testing.T) {
	w := wf(
		nd("search", "http", map[string]any{"url": "u"}),
		nd("notify", "mcp-slack-send-message", map[string]any{"channel": "dev"}),
		nd("after", "shell", map[string]any{"command": "echo ${matches.x} ${summary}"}),
	)
	w.Inputs = workflow.Inputs{input("summary", 2)}
	w.Mappings = map[string]*workflow.Mapping{
		"search": {OutputMappings: map[string]string{"response": "matches"}},
		"notify": {InputMappings: map[string]string{"text": "summary"}},
	}
	errs, warns := run(t, w)
	if len(errs)+len(warns) != 0 {
		t.Fatalf("mapped keys are valid sources and input mappings fill required params:\n%s%s", dump(errs), dump(warns))
	}
	// A mapped key read before its step runs, and a mapping of an unknown output.
	w2 := wf(
		nd("first", "shell", map[string]any{"command": "echo ${matches}"}),
		nd("search", "http", map[string]any{"url": "u"}),
	)
	w2.Mappings = map[string]*workflow.Mapping{"search": {OutputMappings: map[string]string{"respons": "matches"}}}
	errs, _ = run(t, w2)
	find(t, errs, "Node 'first' references 'matches' (published by step 'search' through an output mapping) which comes after it in execution order (position 1 >= 0)")
	d := find(t, errs, "Output mapping of step 'search' maps 'respons', which node 'search' (type: http) does not output")
	hasLines(t, d.Hint, "Did you mean 'response'?")
}

func TestMCPOutputsWithoutSchemaAreRuntimeValidated(t *testing.T) {
	w := wf(nd("post", "mcp-slack-send-message", map[string]any{"channel": "c", "text": "t"}), nd("use", "shell", map[string]any{"command": "echo ${post.ts} ${post.result}"}))
	errs, warns := run(t, w)
	if len(errs) != 0 {
		t.Fatalf("hoisted MCP fields are not errors:\n%s", dump(errs))
	}
	find(t, warns, "Template ${post.ts} in node 'use' parameter 'command' uses runtime validation: MCP tool 'mcp-slack-send-message' declares no output schema")
}

func TestNestedWorkflowOutputs(t *testing.T) {
	child := &workflow.Workflow{
		Inputs:  workflow.Inputs{{Name: "topic"}, {Name: "lang", Default: "en"}},
		Outputs: workflow.Outputs{{Name: "summary", Type: "str"}, {Name: "items", Type: "list"}},
	}
	load := func(name, ref string) (*workflow.Workflow, error) {
		if name == "child" {
			return child, nil
		}
		return nil, errors.New("workflow 'missing' not found")
	}
	mk := func(params map[string]any, cmd string) *workflow.Workflow {
		return wf(nd("call", "workflow", params), nd("use", "shell", map[string]any{"command": cmd}))
	}
	opts := Options{Catalog: testCatalog(), LoadWorkflow: load}

	errs, warns := Validate(context.Background(), mk(map[string]any{"workflow_name": "child", "param_mapping": map[string]any{"topic": "x"}}, "echo ${call.summary}"), opts)
	if len(errs)+len(warns) != 0 {
		t.Fatalf("declared child outputs are exposed:\n%s%s", dump(errs), dump(warns))
	}
	errs, _ = Validate(context.Background(), mk(map[string]any{"workflow_name": "child", "param_mapping": map[string]any{"topic": "x"}, "output_mapping": map[string]any{"summary": "text"}}, "echo ${call.summary}"), opts)
	d := find(t, errs, "Node 'call' (type: workflow) does not output 'summary'")
	hasLines(t, d.Message, "  ✓ ${call.text} (str)")

	errs, _ = Validate(context.Background(), mk(map[string]any{"workflow_name": "child", "output_mapping": map[string]any{"sumary": "s"}}, "echo ${call.s}"), opts)
	find(t, errs, "Node 'call' (workflow): the child workflow requires input 'topic', which param_mapping does not provide")
	o := find(t, errs, "Node 'call' (workflow): output_mapping maps 'sumary', which the child workflow does not produce")
	hasLines(t, o.Hint, "Did you mean 'summary'?", "Declared outputs: summary, items")

	_, warns = Validate(context.Background(), mk(map[string]any{"workflow_name": "child", "param_mapping": map[string]any{"topic": "x", "langs": "de"}}, "echo ${call.summary}"), opts)
	p := find(t, warns, "Node 'call' (workflow): param_mapping sets 'langs', which the child workflow does not declare as an input")
	hasLines(t, p.Hint, "Did you mean 'lang'?", "Declared inputs: topic, lang")

	errs, _ = Validate(context.Background(), mk(map[string]any{"workflow_name": "missing"}, "echo ${call.x}"), opts)
	find(t, errs, "Node 'call' (workflow): cannot load workflow_name 'missing': workflow 'missing' not found")

	// Without a loader, nested outputs are typed any.
	errs, warns = Validate(context.Background(), mk(map[string]any{"workflow_name": "child"}, "echo ${call.anything.at[0].all}"), Options{Catalog: testCatalog()})
	if len(errs)+len(warns) != 0 {
		t.Fatalf("unknown nested outputs are any:\n%s%s", dump(errs), dump(warns))
	}
	// The child's own templates inside workflow_ir are not the parent's.
	inline := map[string]any{"ir_version": "0.1.0", "nodes": []any{map[string]any{"id": "x", "type": "shell", "params": map[string]any{"command": "echo ${topic}"}}},
		"inputs": map[string]any{"topic": map[string]any{"type": "string"}}, "outputs": map[string]any{"out": map[string]any{"source": "${x.stdout}"}}}
	errs, _ = Validate(context.Background(), mk(map[string]any{"workflow_ir": inline, "param_mapping": map[string]any{"topic": "t"}}, "echo ${call.out}"), opts)
	if len(errs) != 0 {
		t.Fatalf("inline child:\n%s", dump(errs))
	}
}

func TestStructureErrorsAreReported(t *testing.T) {
	w := wf(nd("a", "shell", map[string]any{"command": "true"}))
	w.Edges = append(w.Edges, workflow.Edge{From: "a", To: "ghost"})
	errs, _ := run(t, w)
	d := find(t, errs, "edges[0] (a → ghost), key 'to': Edge references non-existent node 'ghost'")
	if d.Hint == "" {
		t.Error("structure errors carry the suggestion as hint")
	}
}

func TestManyProblemsReportedTogether(t *testing.T) {
	w := wf(
		nd("fetch", "http", map[string]any{"url": "${base}/x"}),
		nd("b", "shel", map[string]any{"command": "echo"}),
		nd("c", "shell", map[string]any{"command": "echo ${fetch.nope} ${d.stdout} ${missing}", "bogus": int64(1)}),
		nd("d", "shell", map[string]any{"command": "true"}),
	)
	w.Inputs = workflow.Inputs{input("base", 2), input("unused", 4)}
	w.Outputs = workflow.Outputs{{Name: "o", Source: "${c.nothing}", Line: 60}}
	errs, warns := run(t, w)
	want := []string{
		"Node 'c' references 'd' which comes after it",
		"Node 'c' references undefined input '${missing}'",
		"Node 'fetch' (type: http) does not output 'nope'",
		"Declared input(s) never used as template variable: unused",
		"Unknown node type: 'shel'",
		"Node 'c' (type: shell) does not output 'nothing'",
		"Node 'c' (shell): unknown parameter 'bogus'.",
	}
	if len(errs) != len(want) {
		t.Errorf("want %d errors, got:\n%s", len(want), dump(errs))
	}
	for i, p := range want {
		if i < len(errs) && !strings.HasPrefix(errs[i].Message, p) {
			t.Errorf("error %d = %q, want prefix %q (layer order)", i, errs[i].Message, p)
		}
	}
	_ = warns
}

func TestNilCatalogSkipsInterfaceChecks(t *testing.T) {
	w := wf(nd("a", "whatever", map[string]any{"x": "1"}), nd("b", "other", map[string]any{"y": "${a.anything}"}))
	errs, warns := Validate(context.Background(), w, Options{})
	if len(errs)+len(warns) != 0 {
		t.Fatalf("no catalog, no interface checks:\n%s%s", dump(errs), dump(warns))
	}
}

func TestNamespacingOff(t *testing.T) {
	off := false
	w := wf(nd("a", "shell", map[string]any{"command": "ls"}), nd("b", "shell", map[string]any{"command": "echo ${stdout}"}))
	w.EnableNamespacing = &off
	errs, _ := run(t, w)
	if len(errs) != 0 {
		t.Fatalf("outputs live at the root without namespacing:\n%s", dump(errs))
	}
}

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{Message: "m", Line: 4, Hint: "h"}
	if d.String() != "Line 4: m\nh" {
		t.Errorf("%q", d.String())
	}
}

func BenchmarkValidate1000Nodes(b *testing.B) {
	nodes := make([]*workflow.Node, 1000)
	for i := range nodes {
		cmd := "echo start"
		if i > 0 {
			cmd = fmt.Sprintf("echo ${n%d.stdout} ${n%d.exit_code}", i-1, i/2)
		}
		nodes[i] = nd(fmt.Sprintf("n%d", i), "shell", map[string]any{"command": cmd})
	}
	w := wf(nodes...)
	cat := testCatalog()
	b.ReportAllocs()
	for b.Loop() {
		errs, _ := Validate(context.Background(), w, Options{Catalog: cat})
		if len(errs) != 0 {
			b.Fatal(dump(errs))
		}
	}
}

func TestOddIRDoesNotPanic(t *testing.T) {
	w := &workflow.Workflow{
		Nodes:    []*workflow.Node{nil, {ID: "a", Type: "shell", Params: map[string]any{"command": []any{"${", map[string]any{"k": "${a.b[${c}].d}"}}}, Batch: &workflow.Batch{}}, {ID: "a", Type: "shell"}, {ID: "", Type: ""}},
		Inputs:   workflow.Inputs{nil, {Name: ""}},
		Outputs:  workflow.Outputs{nil, {Name: "o", Source: "${"}, {Name: "p", Source: "$"}},
		Edges:    []workflow.Edge{{From: "a", To: "a"}, {From: "x", To: "y"}},
		Mappings: map[string]*workflow.Mapping{"a": nil, "zz": {InputMappings: map[string]string{"p": ""}}},
	}
	errs, _ := Validate(context.Background(), w, Options{Catalog: testCatalog(), Provided: map[string]any{}, LoadWorkflow: func(string, string) (*workflow.Workflow, error) {
		return &workflow.Workflow{Nodes: []*workflow.Node{nil}, Inputs: workflow.Inputs{nil}, Outputs: workflow.Outputs{nil}}, nil
	}})
	if len(errs) == 0 {
		t.Fatal("a broken IR must produce errors")
	}
	errs, _ = Validate(context.Background(), nil, Options{})
	if len(errs) != 1 {
		t.Fatal("nil workflow is an error")
	}
	wn := wf(nd("call", "workflow", map[string]any{"workflow_name": "c", "output_mapping": map[string]any{"x": "y"}}), nd("u", "shell", map[string]any{"command": "echo ${call.y}"}))
	Validate(context.Background(), wn, Options{Catalog: testCatalog(), LoadWorkflow: func(string, string) (*workflow.Workflow, error) {
		return &workflow.Workflow{Nodes: []*workflow.Node{nil}, Inputs: workflow.Inputs{nil}, Outputs: workflow.Outputs{nil}}, nil
	}})
}

func TestSourcelessOutput(t *testing.T) {
	w := wf(nd("a", "shell", map[string]any{"command": "true"}))
	w.Outputs = workflow.Outputs{{Name: "result", Line: 20}, {Name: "pub", Line: 23}}
	w.Mappings = map[string]*workflow.Mapping{"a": {OutputMappings: map[string]string{"stdout": "pub"}}}
	errs, _ := run(t, w)
	d := find(t, errs, "Output 'result' has no source, and no step publishes a key named 'result'; it would always be empty")
	if d.Line != 20 || d.Hint != "Add a source, e.g. '- source: ${a.stdout}'." {
		t.Errorf("got %+v", d)
	}
	if len(errs) != 1 {
		t.Errorf("a mapped key is a valid output:\n%s", dump(errs))
	}
}

func TestUnionTypes(t *testing.T) {
	for _, tc := range []struct {
		t    string
		want []string
	}{
		{"dict|str", []string{"dict", "str"}},
		{"list[dict|str]|string", []string{"list[dict|str]", "str"}},
		{"Object", []string{"dict"}},
		{"", []string{"any"}},
	} {
		if got := members(tc.t); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("members(%q) = %q, want %q", tc.t, got, tc.want)
		}
	}
	if !compatible("int", "float") || compatible("dict", "int") || !compatible("dict|str", "str") || compatible("dict|int", "dict") || !compatible("str", "dict|int") {
		t.Error("compatibility matrix")
	}
}

func TestBadBatchConfig(t *testing.T) {
	b := nd("each", "shell", map[string]any{"command": "echo ${item}"})
	b.Batch = &workflow.Batch{Items: "not a template", MaxConcurrent: 500, ErrorHandling: "ignore"}
	w := wf(nd("first", "shell", map[string]any{"command": "true"}), b)
	errs, _ := run(t, w)
	for _, p := range []string{
		"Step 'each', batch key 'items': got 'not a template', which is not in the expected form",
		"Step 'each', batch key 'max_concurrent': 500 is greater than the maximum of 100",
		"Step 'each', batch key 'error_handling':",
	} {
		d := find(t, errs, p)
		if d.NodeID != "each" || d.Line != 20 || d.Hint == "" {
			t.Errorf("%q: want node 'each' line 20 with a hint, got %+v", p, d)
		}
	}
}

func TestErrorBranchReadsFailedStep(t *testing.T) {
	w := wf(nd("a", "http", map[string]any{"url": "u"}), nd("b", "shell", map[string]any{"command": "echo ${a.status_code}"}))
	r := nd("rescue", "shell", map[string]any{"command": "echo ${a.error}"})
	r.Line = 30
	w.Nodes = append(w.Nodes, r)
	w.Edges = append(w.Edges, workflow.Edge{From: "a", To: "rescue", Action: "error"})
	errs, warns := run(t, w)
	if len(errs)+len(warns) != 0 {
		t.Fatalf("an error branch may read the failed step's error:\n%s%s", dump(errs), dump(warns))
	}
}

func TestShellGuardUsesInputTypes(t *testing.T) {
	w := wf(nd("sh", "shell", map[string]any{"command": "echo ${cfg}"}))
	in := input("cfg", 3)
	in.Type = "object"
	w.Inputs = workflow.Inputs{in}
	errs, _ := run(t, w)
	find(t, errs, "Shell node 'sh': cannot use ${cfg} (type: dict) in command parameter.")
}

func TestLiteralParamTypes(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		typ    string
		want   string // "" means no error
	}{
		{"word for number", map[string]any{"command": "echo", "timeout": "soon"}, "shell", `parameter 'timeout' expects a whole number (int), got the text "soon"`},
		{"number ok", map[string]any{"command": "echo", "timeout": int64(5)}, "shell", ""},
		{"template skipped", map[string]any{"command": "echo", "timeout": "${x}"}, "shell", ""},
		{"string for dict", map[string]any{"command": "echo", "env": "FOO=bar"}, "shell", "parameter 'env' expects an object"},
		{"list for string", map[string]any{"command": []any{"echo", "hi"}}, "shell", "parameter 'command' expects a string (str), got a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := wf(nd("a", tc.typ, tc.params))
			w.Inputs = workflow.Inputs{input("x", 2)}
			errs, _ := run(t, w)
			var got []string
			for _, e := range errs {
				if strings.Contains(e.Message, "parameter '") && !strings.Contains(e.Message, "unknown") {
					got = append(got, e.Message+"\n"+e.Hint)
				}
			}
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("want no type error, got %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) || !strings.Contains(got[0], "Corrected line:") {
				t.Errorf("want one error containing %q and a corrected line, got %q", tc.want, got)
			}
		})
	}
}

// Mistakes that used to validate and then misbehaved at run time.
func TestSilentMistakesAreErrors(t *testing.T) {
	t.Run("batch never uses its item", func(t *testing.T) {
		n := nd("a", "shell", map[string]any{"command": "echo hi"})
		n.Batch = &workflow.Batch{Items: []any{"x", "y"}}
		errs, _ := run(t, wf(n))
		d := find(t, errs, "Batch step 'a' never uses its item")
		if d.Line != 10 || !strings.Contains(d.Hint, "${item}") {
			t.Errorf("got %+v", d)
		}
		for _, cmd := range []string{"echo ${item}", "echo ${__index__}", "echo ${item.name}"} {
			n := nd("a", "shell", map[string]any{"command": cmd})
			n.Batch = &workflow.Batch{Items: []any{"x", "y"}}
			if errs, _ := run(t, wf(n)); len(errs) != 0 {
				t.Errorf("%q uses the item:\n%s", cmd, dump(errs))
			}
		}
		n = nd("a", "shell", map[string]any{"command": "echo ${row}"})
		n.Batch = &workflow.Batch{Items: []any{"x"}, As: "row"}
		if errs, _ := run(t, wf(n)); len(errs) != 0 {
			t.Errorf("a custom alias is the item:\n%s", dump(errs))
		}
	})
	t.Run("error edge back to the same step", func(t *testing.T) {
		w := wf(nd("a", "shell", map[string]any{"command": "false"}))
		w.Edges = append(w.Edges, workflow.Edge{From: "a", To: "a", Action: "error"})
		errs, _ := run(t, w)
		d := find(t, errs, "Step 'a' sends its own error back to itself")
		if d.Param != "on_error" || !strings.Contains(d.Hint, "retries: 3") {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("input default of the wrong type", func(t *testing.T) {
		w := wf(nd("a", "shell", map[string]any{"command": "echo ${x}"}))
		w.Inputs = workflow.Inputs{{Name: "x", Type: "number", Default: "abc", Line: 5}}
		errs, _ := run(t, w)
		d := find(t, errs, "Input 'x' has type 'number', but its default does not: the type expects a number, got")
		if d.Line != 5 || !strings.Contains(d.Hint, "'- default: 0.5'") {
			t.Errorf("got %+v", d)
		}
		w.Inputs = workflow.Inputs{{Name: "x", Type: "number", Default: "1.5"}, {Name: "y", Type: "integer", Default: int64(3)}}
		w.Nodes[0].Params["command"] = "echo ${x} ${y}"
		if errs, _ := run(t, w); len(errs) != 0 {
			t.Errorf("defaults of the right type:\n%s", dump(errs))
		}
	})
}
