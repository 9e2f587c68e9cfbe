package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/instructions"
)

var allTools = []string{
	"workflow_discover", "registry_discover", "registry_run", "workflow_execute", "workflow_validate", "workflow_save",
	"registry_describe", "registry_search", "workflow_list", "workflow_describe", "settings_set", "settings_get",
	"registry_list", "trace_read", "run_status", "run_cancel",
}

func TestListToolsExposesThe16ToolsWithSchemas(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
		if len(tl.Description) < 80 {
			t.Errorf("%s: description too thin to teach an agent: %q", tl.Name, tl.Description)
		}
		in, _ := json.Marshal(tl.InputSchema)
		out, _ := json.Marshal(tl.OutputSchema)
		if !strings.Contains(string(in), `"type":"object"`) {
			t.Errorf("%s: input schema %s", tl.Name, in)
		}
		if !strings.Contains(string(out), `"success"`) || !strings.Contains(string(out), `"error"`) {
			t.Errorf("%s: output schema lacks the envelope: %s", tl.Name, out)
		}
	}
	want := append([]string(nil), allTools...)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools:\n got %v\nwant %v", got, want)
	}
}

func TestInitializeCarriesInstructionsAndResources(t *testing.T) {
	f := newFixture(t, nil)
	ir := f.cs.InitializeResult()
	contains(t, ir.Instructions, "workflow_discover")
	contains(t, ir.Instructions, "pflow://instructions")
	contains(t, ir.Instructions, "pflow://instructions/sandbox")
	rl, err := f.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 2 {
		t.Fatalf("resources: %d", len(rl.Resources))
	}
	for uri, want := range map[string]string{InstructionsURI: instructions.Agent(), SandboxInstructionsURI: instructions.Sandbox()} {
		rr, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if rr.Contents[0].Text != want || len(want) < 5000 {
			t.Fatalf("%s: %d bytes", uri, len(rr.Contents[0].Text))
		}
	}
	for _, s := range []string{"workflow_discover", "registry_run", "workflow_save", "${", "## Steps", "trace_read"} {
		contains(t, instructions.Agent(), s)
		contains(t, instructions.Sandbox(), s)
	}
	contains(t, instructions.Sandbox(), "no shell")
	if instructions.Agent() == instructions.Sandbox() {
		t.Fatal("sandbox guide is the same as the full guide")
	}
}

func TestWorkflowExecuteInlineMarkdownAndIR(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_execute", map[string]any{"workflow": greetMD, "parameters": map[string]any{"name": "Ada"}}).mustOK(t)
	out := r.data()["outputs"].(map[string]any)
	if strings.TrimSpace(fmt.Sprint(out["message"])) != "hello Ada" {
		t.Fatalf("outputs: %v", out)
	}
	tp, _ := r.Env["trace_path"].(string)
	if tp == "" {
		t.Fatalf("no trace_path: %s", r.Text)
	}
	if _, err := os.Stat(tp); err != nil {
		t.Fatalf("trace not written: %v", err)
	}
	if !strings.HasPrefix(tp, filepath.Join(f.home, "debug")) {
		t.Fatalf("trace outside debug dir: %s", tp)
	}

	ir := map[string]any{"nodes": []any{map[string]any{"id": "s", "type": "echo", "params": map[string]any{"message": "ir works"}}},
		"outputs": map[string]any{"o": map[string]any{"source": "${s.echo}"}}}
	r = f.call("workflow_execute", map[string]any{"workflow": ir}).mustOK(t)
	if r.data()["outputs"].(map[string]any)["o"] != "ir works" {
		t.Fatal(r.Text)
	}
	// The same IR sent as a JSON string (Claude Desktop habit), and parameters as a JSON string.
	b, _ := json.Marshal(ir)
	f.call("workflow_execute", map[string]any{"workflow": string(b), "parameters": "{}"}).mustOK(t)
	r = f.call("workflow_execute", map[string]any{"workflow": echoMD, "parameters": `{"msg": "from string"}`}).mustOK(t)
	if r.data()["outputs"].(map[string]any)["out"] != "from string" {
		t.Fatal(r.Text)
	}
}

func TestWorkflowExecuteResolvesLibraryThenDraftThenPath(t *testing.T) {
	f := newFixture(t, nil)
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "saved-echo", "description": "echo"}).mustOK(t)
	r := f.call("workflow_execute", map[string]any{"workflow": "saved-echo", "parameters": map[string]any{"msg": "lib"}}).mustOK(t)
	if r.data()["workflow"].(map[string]any)["action"] != "reused" {
		t.Fatalf("library workflow not reported as reused: %s", r.Text)
	}
	writeFile(t, filepath.Join(f.home, "drafts", "my-draft.pflow.md"), echoMD)
	r = f.call("workflow_execute", map[string]any{"workflow": "my-draft", "parameters": map[string]any{"msg": "draft"}}).mustOK(t)
	if r.data()["outputs"].(map[string]any)["out"] != "draft" {
		t.Fatal(r.Text)
	}
	// A library workflow wins over a draft of the same name.
	writeFile(t, filepath.Join(f.home, "drafts", "saved-echo.pflow.md"), strings.Replace(echoMD, "${msg}", "from draft", 1))
	r = f.call("workflow_execute", map[string]any{"workflow": "saved-echo", "parameters": map[string]any{"msg": "lib"}}).mustOK(t)
	if r.data()["outputs"].(map[string]any)["out"] != "lib" {
		t.Fatal(r.Text)
	}
	p := writeFile(t, filepath.Join(t.TempDir(), "file.pflow.md"), echoMD)
	r = f.call("workflow_execute", map[string]any{"workflow": p, "parameters": map[string]any{"msg": "path"}}).mustOK(t)
	if r.data()["outputs"].(map[string]any)["out"] != "path" {
		t.Fatal(r.Text)
	}
	r = f.call("workflow_execute", map[string]any{"workflow": "no-such-flow"}).mustErr(t, ErrNotFound)
	contains(t, r.Text, "workflow_list")
	f.call("workflow_execute", map[string]any{"workflow": filepath.Join(t.TempDir(), "missing.pflow.md")}).mustErr(t, ErrNotFound)
}

func TestWorkflowExecuteMissingInputsListsThem(t *testing.T) {
	f := newFixture(t, nil)
	md := strings.Replace(greetMD, "## Steps", "### greeting\nWhich greeting.\n- type: string\n- required: true\n\n## Steps", 1)
	md = strings.Replace(md, `echo "hello ${name}"`, `echo "${greeting} ${name}"`, 1)
	r := f.call("workflow_execute", map[string]any{"workflow": md}).mustErr(t, ErrValidation)
	missing := r.errDetails()["missing_inputs"].([]any)
	if len(missing) != 2 || missing[0] != "name" || missing[1] != "greeting" {
		t.Fatalf("missing_inputs: %v", missing)
	}
	contains(t, r.errMsg(), "name")
	contains(t, r.errMsg(), "greeting")
	if _, err := os.Stat(filepath.Join(f.home, "debug")); err == nil {
		ents, _ := os.ReadDir(filepath.Join(f.home, "debug"))
		if len(ents) > 0 {
			t.Fatal("a run with missing inputs must not execute")
		}
	}
}

// An unknown parameter (a typo of an input) is named with its fix in the
// message, next to the missing input it was meant to be.
func TestWorkflowExecuteUnknownInputNamesTheFix(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_execute", map[string]any{"workflow": greetMD, "parameters": map[string]any{"nmae": "x"}}).mustErr(t, ErrValidation)
	contains(t, r.errMsg(), "missing required inputs: name")
	contains(t, r.errMsg(), "Unknown input 'nmae': the workflow does not declare it — did you mean 'name'?")
}

func TestWorkflowExecuteFailureReturnsCheckpoint(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_execute", map[string]any{"workflow": twoStepFailMD}).mustErr(t, ErrExecution)
	if r.Env["checkpoint"].(map[string]any)["failed_node"] != "second" || r.errDetails()["node_id"] != "second" {
		t.Fatalf("failed_node: %s", r.Text)
	}
	cp := r.Env["checkpoint"].(map[string]any)
	if fmt.Sprint(cp["completed_nodes"]) != "[first]" || cp["failed_node"] != "second" {
		t.Fatalf("checkpoint: %v", cp)
	}
	contains(t, r.errMsg(), "second")
	if r.Env["trace_path"] == nil {
		t.Fatalf("failed run without trace: %s", r.Text)
	}
}

func TestWorkflowExecuteValidationError(t *testing.T) {
	f := newFixture(t, nil)
	bad := strings.Replace(echoMD, "- type: echo", "- type: no-such-node", 1)
	r := f.call("workflow_execute", map[string]any{"workflow": bad, "parameters": map[string]any{"msg": "x"}}).mustErr(t, ErrValidation)
	contains(t, r.Text, "no-such-node")
	f.call("workflow_execute", map[string]any{"workflow": "# Broken\n\nno steps here\n"}).mustErr(t, ErrValidation)
	f.call("workflow_execute", map[string]any{"workflow": "{not json"}).mustErr(t, ErrValidation)
}

func TestArgumentsAreValidated(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_execute", map[string]any{"workflow": "x", "inputs": map[string]any{}}).mustErr(t, ErrValidation)
	contains(t, r.errMsg(), "inputs")
	f.call("workflow_execute", map[string]any{}).mustErr(t, ErrValidation)
	f.call("workflow_execute", map[string]any{"workflow": 42}).mustErr(t, ErrValidation)
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "x-y"}).mustErr(t, ErrValidation)
	f.call("registry_describe", map[string]any{"nodes": "shell"}).mustErr(t, ErrValidation)
}

func TestWorkflowValidate(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_validate", map[string]any{"workflow": greetMD}).mustOK(t)
	if r.data()["valid"] != true {
		t.Fatal(r.Text)
	}
	// With parameters, the values given are checked as the run checks them;
	// an input left out is not an error.
	typed := strings.Replace(greetMD, "- type: string", "- type: integer", 1)
	f.call("workflow_validate", map[string]any{"workflow": typed, "parameters": map[string]any{}}).mustOK(t)
	f.call("workflow_validate", map[string]any{"workflow": typed, "parameters": map[string]any{"name": 3}}).mustOK(t)
	r = f.call("workflow_validate", map[string]any{"workflow": typed, "parameters": map[string]any{"name": "Ada"}}).mustErr(t, ErrValidation)
	contains(t, r.Text, "Input 'name' expects an integer")
	ie, _ := r.errDetails()["input_errors"].([]any)
	if len(ie) != 1 || ie[0].(map[string]any)["line"] != float64(6) {
		t.Fatalf("input_errors should name the input's line 6: %s", r.Text)
	}
	r = f.call("workflow_validate", map[string]any{"workflow": greetMD, "parameters": map[string]any{"nmae": "Ada"}}).mustErr(t, ErrValidation)
	contains(t, r.Text, "did you mean 'name'")
	// Validation never executes: a step that would create a file does not.
	marker := filepath.Join(t.TempDir(), "ran")
	md := strings.Replace(echoMD, "- type: echo\n- message: ${msg}", "- type: shell\n- command: touch "+marker+" && echo ${msg}", 1)
	md = strings.Replace(md, "${say.echo}", "${say.stdout}", 1)
	f.call("workflow_validate", map[string]any{"workflow": md}).mustOK(t)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("workflow_validate executed the workflow")
	}
	bad := strings.Replace(greetMD, "${hello.stdout}", "${hello.nope}", 1)
	bad = strings.Replace(bad, "- type: shell", "- type: shel", 1)
	r = f.call("workflow_validate", map[string]any{"workflow": bad}).mustErr(t, ErrValidation)
	errs, _ := r.errDetails()["diagnostics"].([]any)
	if len(errs) < 1 {
		t.Fatal(r.Text)
	}
	contains(t, r.Text, "shel")
	f.call("workflow_validate", map[string]any{"workflow": "nothing-saved"}).mustErr(t, ErrNotFound)
}

func TestWorkflowSave(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_save", map[string]any{"workflow_file": greetMD, "name": "greet", "description": "Greet a person"}).mustOK(t)
	path := r.data()["path"].(string)
	if path != filepath.Join(f.home, "workflows", "greet.pflow.md") {
		t.Fatalf("path %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, string(data), "# Greet")
	ew := r.data()["execute_with"].(map[string]any)
	if ew["workflow"] != "greet" || ew["parameters"].(map[string]any)["name"] != "<string>" {
		t.Fatal(r.Text)
	}
	// Refuses to overwrite without force, names force in the fix.
	r = f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "greet", "description": "x"}).mustErr(t, ErrValidation)
	contains(t, r.errMsg(), "already exists")
	contains(t, r.Text, "force: true")
	data2, _ := os.ReadFile(path)
	if string(data2) != string(data) {
		t.Fatal("refused save changed the file")
	}
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "greet", "description": "x", "force": true}).mustOK(t)
	data3, _ := os.ReadFile(path)
	contains(t, string(data3), "# Echo")

	// Invalid workflows are not saved.
	bad := strings.Replace(echoMD, "- type: echo", "- type: nope-node", 1)
	f.call("workflow_save", map[string]any{"workflow_file": bad, "name": "bad-one", "description": "x"}).mustErr(t, ErrValidation)
	if _, err := os.Stat(filepath.Join(f.home, "workflows", "bad-one.pflow.md")); err == nil {
		t.Fatal("invalid workflow was saved")
	}
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "Bad Name", "description": "x"}).mustErr(t, ErrValidation)
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "settings", "description": "x"}).mustErr(t, ErrValidation)
	f.call("workflow_save", map[string]any{"workflow_file": "no-such-draft", "name": "abc", "description": "x"}).mustErr(t, ErrNotFound)

	// JSON IR that workflow_execute runs (and `pflow workflow save` accepts)
	// is saved too, as its .pflow.md rendering (the two save
	// paths once drifted apart; it was refused with "Missing '## Steps'").
	ir := `{"ir_version": "0.1.0", "nodes": [{"id": "say", "type": "echo", "purpose": "Say it.", "params": {"message": "hi"}}], "edges": []}`
	f.call("workflow_execute", map[string]any{"workflow": ir}).mustOK(t)
	f.call("workflow_save", map[string]any{"workflow_file": ir, "name": "from-ir", "description": "From IR"}).mustOK(t)
	saved, err := os.ReadFile(filepath.Join(f.home, "workflows", "from-ir.pflow.md"))
	if err != nil {
		t.Fatal(err)
	}
	contains(t, string(saved), "### say")
	f.call("workflow_execute", map[string]any{"workflow": "from-ir"}).mustOK(t)
}

func TestWorkflowSaveFromDraftDeletesDraft(t *testing.T) {
	f := newFixture(t, nil)
	draft := writeFile(t, filepath.Join(f.home, "drafts", "wip.pflow.md"), echoMD)
	r := f.call("workflow_save", map[string]any{"workflow_file": "wip", "name": "echo-flow", "description": "Echo"}).mustOK(t)
	if r.data()["draft_deleted"] != draft {
		t.Fatalf("draft_deleted: %s", r.Text)
	}
	if _, err := os.Stat(draft); err == nil {
		t.Fatal("draft still there")
	}
	// By path inside the drafts directory too.
	draft2 := writeFile(t, filepath.Join(f.home, "drafts", "wip2.pflow.md"), echoMD)
	f.call("workflow_save", map[string]any{"workflow_file": draft2, "name": "echo-two", "description": "Echo"}).mustOK(t)
	if _, err := os.Stat(draft2); err == nil {
		t.Fatal("draft by path still there")
	}
	// A file outside the drafts directory is never deleted.
	other := writeFile(t, filepath.Join(t.TempDir(), "keep.pflow.md"), echoMD)
	f.call("workflow_save", map[string]any{"workflow_file": other, "name": "echo-three", "description": "Echo"}).mustOK(t)
	if _, err := os.Stat(other); err != nil {
		t.Fatal("non-draft source deleted")
	}
}

func TestWorkflowListAndDescribe(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_list", nil).mustOK(t)
	if r.data()["count"].(float64) != 0 || r.data()["hint"] == nil {
		t.Fatal(r.Text)
	}
	f.call("workflow_save", map[string]any{"workflow_file": greetMD, "name": "greet", "description": "Greet a person politely"}).mustOK(t)
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "echo-it", "description": "Echo a message"}).mustOK(t)
	r = f.call("workflow_list", map[string]any{}).mustOK(t)
	if r.data()["count"].(float64) != 2 {
		t.Fatal(r.Text)
	}
	r = f.call("workflow_list", map[string]any{"filter": "PERSON greet"}).mustOK(t)
	ws := r.data()["workflows"].([]any)
	if len(ws) != 1 || ws[0].(map[string]any)["name"] != "greet" {
		t.Fatal(r.Text)
	}
	r = f.call("workflow_list", map[string]any{"filter": "nothing matches"}).mustOK(t)
	if r.data()["count"].(float64) != 0 || r.data()["total"].(float64) != 2 {
		t.Fatal(r.Text)
	}

	f.call("workflow_execute", map[string]any{"workflow": "greet", "parameters": map[string]any{"name": "Bo"}}).mustOK(t)
	r = f.call("workflow_describe", map[string]any{"name": "greet"}).mustOK(t)
	d := r.data()
	in := d["inputs"].([]any)[0].(map[string]any)
	if in["name"] != "name" || in["required"] != true {
		t.Fatal(r.Text)
	}
	if d["execution"].(map[string]any)["execution_count"].(float64) != 1 {
		t.Fatalf("execution statistics: %s", r.Text)
	}
	contains(t, d["cli_command"].(string), "pflow greet name=")
	if ew := d["execute_with"].(map[string]any); ew["workflow"] != "greet" || ew["parameters"].(map[string]any)["name"] != "<string>" {
		t.Fatalf("execute_with: %s", r.Text)
	}

	// Template inputs: ${region} is read but not declared.
	md := strings.Replace(echoMD, "- message: ${msg}", "- message: ${msg} ${region}", 1)
	writeFile(t, filepath.Join(f.home, "workflows", "undeclared.pflow.md"), md)
	r = f.call("workflow_describe", map[string]any{"name": "undeclared"}).mustOK(t)
	if fmt.Sprint(r.data()["template_inputs"]) != "[region]" {
		t.Fatal(r.Text)
	}
	r = f.call("workflow_describe", map[string]any{"name": "gret"}).mustErr(t, ErrNotFound)
	contains(t, r.Text, "greet")
}

func TestWorkflowDiscover(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_discover", map[string]any{"query": "greet somebody"}).mustOK(t)
	if len(r.data()["matches"].([]any)) != 0 || r.data()["recommendation"] != "build" {
		t.Fatal(r.Text)
	}
	f.call("workflow_save", map[string]any{"workflow_file": greetMD, "name": "greet", "description": "Greet a person by name"}).mustOK(t)
	f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "echo-it", "description": "Echo a message"}).mustOK(t)
	r = f.call("workflow_discover", map[string]any{"query": "greet a person by name"}).mustOK(t)
	ms := r.data()["matches"].([]any)
	if len(ms) == 0 || ms[0].(map[string]any)["name"] != "greet" {
		t.Fatal(r.Text)
	}
	c := ms[0].(map[string]any)["confidence"].(float64)
	if c <= 0 || c > 1 {
		t.Fatalf("confidence %v", c)
	}
	if len(ms[0].(map[string]any)["reasons"].([]any)) == 0 {
		t.Fatal("no reasons")
	}
	f.call("workflow_discover", map[string]any{"query": "  "}).mustErr(t, ErrValidation)
}

func TestRegistryTools(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("registry_list", nil).mustOK(t)
	if r.data()["summary"].(map[string]any)["core"].(float64) < 3 {
		t.Fatal(r.Text)
	}
	contains(t, r.Text, `"shell"`)
	if strings.Contains(r.Text, `"type":"echo"`) {
		t.Fatal("hidden test node listed")
	}
	// A filter keeps the node types that hold every word.
	r = f.call("registry_list", map[string]any{"filter": "file read"}).mustOK(t)
	contains(t, r.Text, `"read-file"`)
	if strings.Contains(r.Text, `"shell"`) {
		t.Fatalf("the filter kept shell: %s", r.Text)
	}

	r = f.call("registry_search", map[string]any{"pattern": "shell"}).mustOK(t)
	res := r.data()["results"].([]any)
	if len(res) == 0 || res[0].(map[string]any)["type"] != "shell" || res[0].(map[string]any)["match"] != "exact" {
		t.Fatal(r.Text)
	}
	r = f.call("registry_search", map[string]any{"pattern": "zzzqqq"}).mustOK(t)
	if r.data()["count"].(float64) != 0 {
		t.Fatal(r.Text)
	}
	f.call("registry_search", map[string]any{"pattern": " "}).mustErr(t, ErrValidation)

	r = f.call("registry_describe", map[string]any{"nodes": []any{"shell"}}).mustOK(t)
	n := r.data()["nodes"].([]any)[0].(map[string]any)
	if n["type"] != "shell" || len(n["params"].([]any)) == 0 || n["usage"] == "" {
		t.Fatal(r.Text)
	}
	r = f.call("registry_describe", map[string]any{"nodes": []any{"shell", "shel-x", "nonexistent-node"}}).mustErr(t, ErrNotFound)
	contains(t, r.errMsg(), "nonexistent-node")

	r = f.call("registry_discover", map[string]any{"task": "run a shell command"}).mustOK(t)
	nodes := r.data()["nodes"].([]any)
	if len(nodes) == 0 || nodes[0].(map[string]any)["type"] != "shell" {
		t.Fatal(r.Text)
	}
	f.call("registry_discover", map[string]any{"task": ""}).mustErr(t, ErrValidation)
}

func TestRegistryRunRevealsOutputStructure(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("registry_run", map[string]any{"node_type": "shell", "parameters": map[string]any{"command": `echo '{"items":[{"id":7,"title":"x"}]}'`}}).mustOK(t)
	var paths []string
	for _, p := range r.data()["paths"].([]any) {
		paths = append(paths, p.(map[string]any)["path"].(string))
	}
	joined := strings.Join(paths, " ")
	for _, want := range []string{"stdout", "stdout.items[0].id", "stdout.items[0].title", "exit_code"} {
		if !strings.Contains(" "+joined+" ", " "+want+" ") {
			t.Fatalf("path %s missing from %v", want, paths)
		}
	}
	f.call("registry_run", map[string]any{"node_type": "no-such-node"}).mustErr(t, ErrNotFound)
	f.call("registry_run", map[string]any{"node_type": "shell", "parameters": map[string]any{"command": "exit 4"}}).mustErr(t, ErrExecution)
	f.call("registry_run", map[string]any{"node_type": "shell", "parameters": map[string]any{}}).mustErr(t, ErrValidation)
}

func TestSettingsSetGetMasks(t *testing.T) {
	f := newFixture(t, nil)
	secret := "sk-verysecretvalue-12345"
	r := f.call("settings_set", map[string]any{"key": "MY_API_KEY", "value": secret}).mustOK(t)
	if strings.Contains(r.Text, secret) {
		t.Fatal("settings_set echoed the secret")
	}
	r = f.call("settings_get", map[string]any{"key": "MY_API_KEY"}).mustOK(t)
	if r.data()["value"] != "sk-***" || r.data()["source"] != "settings" {
		t.Fatal(r.Text)
	}
	st, err := os.Stat(filepath.Join(f.home, "settings.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("settings.json mode: %v %v", st, err)
	}
	r = f.call("settings_get", map[string]any{"key": "OTHER_KEY"}).mustErr(t, ErrNotFound)
	contains(t, r.Text, "MY_API_KEY")
	f.call("settings_set", map[string]any{"key": "bad key!", "value": "x"}).mustErr(t, ErrValidation)
	f.call("settings_get", map[string]any{"key": "../x"}).mustErr(t, ErrValidation)
	if strings.Contains(f.log.String(), secret) {
		t.Fatal("secret in the server log")
	}
}

func TestSecretsNeverInResponsesLogsOrTraces(t *testing.T) {
	secret := "ghp_TopSecretToken987654"
	f := newFixture(t, []string{"GITHUB_TOKEN=" + secret})
	f.call("settings_set", map[string]any{"key": "SERVICE_PASSWORD", "value": "pw-hunter2-very-long"}).mustOK(t)
	md := "# Leak\nTries to leak.\n\n## Steps\n\n### leak\nPrint secrets.\n- type: shell\n- command: echo $GITHUB_TOKEN pw-hunter2-very-long\n\n### fail\nFail loudly with the secret.\n- type: shell\n- command: echo $GITHUB_TOKEN >&2; exit 1\n"
	r := f.call("workflow_execute", map[string]any{"workflow": md})
	for _, s := range []string{secret, "pw-hunter2-very-long"} {
		if strings.Contains(r.Text, s) {
			t.Fatalf("secret %q in response: %s", s, r.Text)
		}
		if strings.Contains(f.log.String(), s) {
			t.Fatalf("secret %q in log", s)
		}
	}
	tr := f.call("trace_read", map[string]any{"trace_file": "latest"}).mustOK(t)
	b, _ := os.ReadFile(tr.data()["path"].(string))
	for _, s := range []string{secret, "pw-hunter2-very-long"} {
		if strings.Contains(string(b), s) || strings.Contains(tr.Text, s) {
			t.Fatalf("secret %q in trace", s)
		}
	}
}

func TestTraceRead(t *testing.T) {
	f := newFixture(t, nil)
	f.call("trace_read", nil).mustErr(t, ErrNotFound)
	r := f.call("workflow_execute", map[string]any{"workflow": echoMD, "parameters": map[string]any{"msg": "traced"}}).mustOK(t)
	tp := r.Env["trace_path"].(string)
	for _, ref := range []string{"latest", tp, filepath.Base(tp)} {
		r := f.call("trace_read", map[string]any{"trace_file": ref}).mustOK(t)
		if r.data()["path"] != tp {
			t.Fatalf("%s: %s", ref, r.Text)
		}
		contains(t, r.Text, "traced")
	}
	r = f.call("trace_read", map[string]any{}).mustOK(t)
	if r.data()["path"] != tp {
		t.Fatal("default is not latest")
	}
	f.call("trace_read", map[string]any{"trace_file": "workflow-trace-nope.json"}).mustErr(t, ErrNotFound)
	outside := writeFile(t, filepath.Join(f.home, "secret.json"), `{"a":1}`)
	for _, ref := range []string{outside, "../secret.json", filepath.Join(f.home, "debug", "..", "secret.json"), "/etc/passwd", "..", "x\x00.json"} {
		f.call("trace_read", map[string]any{"trace_file": ref}).mustErr(t, ErrSecurity)
	}
	// A symlink inside the trace directory pointing out of it is refused.
	link := filepath.Join(f.home, "debug", "workflow-trace-link.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	f.call("trace_read", map[string]any{"trace_file": "workflow-trace-link.json"}).mustErr(t, ErrSecurity)
}

// 002 tests 16–17: every tool that takes a name refuses path-like names.
func TestNamesThatLookLikePathsAreSecurityErrors(t *testing.T) {
	f := newFixture(t, nil)
	bad := []string{"../etc/passwd", "../etc", "/etc/passwd", `..\windows`, "a/b", "a\\b", "name\x00x", ".."}
	calls := []struct {
		tool string
		args func(n string) map[string]any
	}{
		{"workflow_execute", func(n string) map[string]any { return map[string]any{"workflow": n} }},
		{"workflow_validate", func(n string) map[string]any { return map[string]any{"workflow": n} }},
		{"workflow_describe", func(n string) map[string]any { return map[string]any{"name": n} }},
		{"workflow_save", func(n string) map[string]any {
			return map[string]any{"workflow_file": echoMD, "name": n, "description": "x"}
		}},
		{"workflow_save", func(n string) map[string]any {
			return map[string]any{"workflow_file": n, "name": "fine-name", "description": "x"}
		}},
		{"registry_run", func(n string) map[string]any { return map[string]any{"node_type": n} }},
		{"registry_describe", func(n string) map[string]any { return map[string]any{"nodes": []any{n}} }},
		{"trace_read", func(n string) map[string]any { return map[string]any{"trace_file": n} }},
	}
	for _, c := range calls {
		for _, n := range bad {
			t.Run(c.tool+"/"+strings.ReplaceAll(n, "\x00", "NUL"), func(t *testing.T) {
				r := f.call(c.tool, c.args(n))
				r.mustErr(t, ErrSecurity)
			})
		}
	}
	if _, err := os.Stat(filepath.Join(f.home, "workflows", "fine-name.pflow.md")); err == nil {
		t.Fatal("a refused save wrote a file")
	}
}

func TestHTTPModeRefusesPathsOutsideAllowDirs(t *testing.T) {
	allowed := t.TempDir()
	f := newFixture(t, nil, httpMode(allowed))
	ok := writeFile(t, filepath.Join(allowed, "sub", "ok.pflow.md"), echoMD)
	outside := writeFile(t, filepath.Join(t.TempDir(), "out.pflow.md"), echoMD)
	f.call("workflow_execute", map[string]any{"workflow": ok, "parameters": map[string]any{"msg": "a"}}).mustOK(t)
	f.call("workflow_validate", map[string]any{"workflow": ok}).mustOK(t)
	r := f.call("workflow_execute", map[string]any{"workflow": outside, "parameters": map[string]any{"msg": "a"}}).mustErr(t, ErrSecurity)
	contains(t, r.Text, "--allow-dir")
	f.call("workflow_validate", map[string]any{"workflow": outside}).mustErr(t, ErrSecurity)
	f.call("workflow_save", map[string]any{"workflow_file": outside, "name": "x-y", "description": "x"}).mustErr(t, ErrSecurity)
	// A symlink in the allowed dir pointing outside is refused too.
	link := filepath.Join(allowed, "link.pflow.md")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	f.call("workflow_execute", map[string]any{"workflow": link}).mustErr(t, ErrSecurity)
	// Inline content and names still work.
	f.call("workflow_execute", map[string]any{"workflow": echoMD, "parameters": map[string]any{"msg": "a"}}).mustOK(t)

	g := newFixture(t, nil, httpMode())
	g.call("workflow_execute", map[string]any{"workflow": ok}).mustErr(t, ErrSecurity)
}

// 002 test 18: every request reads fresh state from disk — a settings change
// made while the server runs shows in the next call, without a restart.
func TestEveryCallReadsFreshStateFromDisk(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("registry_search", map[string]any{"pattern": "shell"}).mustOK(t)
	if r.data()["count"].(float64) == 0 {
		t.Fatal(r.Text)
	}
	writeFile(t, filepath.Join(f.home, "settings.json"), `{"version":"1.0.0","registry":{"nodes":{"allow":[],"deny":["shell"]}},"env":{}}`)
	r = f.call("registry_search", map[string]any{"pattern": "shell"}).mustOK(t)
	if r.data()["count"].(float64) != 0 {
		t.Fatalf("denied node still listed: %s", r.Text)
	}
	r = f.call("workflow_execute", map[string]any{"workflow": greetMD, "parameters": map[string]any{"name": "x"}}).mustErr(t, ErrValidation)
	contains(t, r.Text, "shell")
	writeFile(t, filepath.Join(f.home, "workflows", "dropped-in.pflow.md"), echoMD)
	r = f.call("workflow_list", nil).mustOK(t)
	if r.data()["count"].(float64) != 1 {
		t.Fatalf("workflow written behind the server's back not listed: %s", r.Text)
	}
}

// The complete workflows the agent guides show must pass workflow_validate.
func TestGuideExampleWorkflowsAreValid(t *testing.T) {
	f := newFixture(t, nil)
	for name, guide := range map[string]string{"agent": instructions.Agent(), "sandbox": instructions.Sandbox()} {
		n := 0
		rest := guide
		for {
			i := strings.Index(rest, "````markdown\n# ")
			if i < 0 {
				break
			}
			body := rest[i+len("````markdown\n"):]
			j := strings.Index(body, "\n````\n")
			if j < 0 {
				t.Fatalf("%s: unclosed example", name)
			}
			f.call("workflow_validate", map[string]any{"workflow": body[:j+1]}).mustOK(t)
			n++
			rest = body[j:]
		}
		if n == 0 {
			t.Fatalf("%s guide has no complete example workflow", name)
		}
	}
}

func TestArgumentErrorsAndBrokenConfig(t *testing.T) {
	f := newFixture(t, nil)
	f.call("workflow_list", map[string]any{"filter": 3}).mustErr(t, ErrValidation)
	f.call("registry_list", map[string]any{"verbose": true}).mustErr(t, ErrValidation)
	f.call("trace_read", map[string]any{"trace_file": []any{"x"}}).mustErr(t, ErrValidation)
	f.call("workflow_discover", map[string]any{"query": "x", "limit": 0}).mustErr(t, ErrValidation)
	// A settings.json that is not JSON is never overwritten: settings_set fails
	// with an execution error that says where the file is.
	writeFile(t, filepath.Join(f.home, "settings.json"), "{broken")
	r := f.call("settings_set", map[string]any{"key": "A_KEY", "value": "v"}).mustErr(t, ErrExecution)
	contains(t, r.Text, "settings.json")
	b, _ := os.ReadFile(filepath.Join(f.home, "settings.json"))
	if string(b) != "{broken" {
		t.Fatal("broken settings overwritten")
	}
}
