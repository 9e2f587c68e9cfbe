package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// direct is a success whose structuredContent is the value itself (a
// workflow tool's outputs, matching its output schema), not the
// {"success", "data"} envelope of the 16 tools.
type direct struct {
	value map[string]any
	meta  map[string]any
}

// syncWorkflowTools makes the published workflow tools match the library:
// a saved workflow gained is added, one deleted is removed, one changed is
// replaced. go-sdk sends notifications/tools/list_changed to every session
// when the list changes.
func (s *Server) syncWorkflowTools() {
	saved, err := s.opts.App.Library().List("")
	if err != nil {
		s.logf("workflow tools: cannot list the library: %v", err)
		return
	}
	want := map[string]*library.Saved{}
	for _, w := range saved {
		if len(s.opts.Workflows) > 0 && !slices.Contains(s.opts.Workflows, w.Name) {
			continue
		}
		want[w.Name] = w
	}
	s.wfMu.Lock()
	defer s.wfMu.Unlock()
	var gone []string
	for name := range s.wfTools {
		if want[name] == nil {
			gone = append(gone, name)
			delete(s.wfTools, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
		s.removeToolDefs(gone)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w := want[name]
		t, err := workflowToolDef(w)
		if err != nil {
			s.logf("workflow tools: %s: %v", name, err)
			continue
		}
		sig, _ := json.Marshal([]any{t.description, t.input, t.rawOutput})
		if s.wfTools[name] == string(sig) {
			continue
		}
		s.wfTools[name] = string(sig)
		s.removeToolDefs([]string{name})
		s.addTool(t)
	}
}

// workflowToolDef is the tool of one saved workflow: its name, its
// description, its inputs as the input schema and its outputs as the
// output schema; calling it runs the workflow as workflow_execute does.
func workflowToolDef(w *library.Saved) (*toolDef, error) {
	if w.Workflow == nil {
		return nil, fmt.Errorf("the workflow does not parse")
	}
	in := map[string]*jsonschema.Schema{}
	var required []string
	for _, i := range w.Workflow.Inputs {
		p := typedSchema(i.Type, i.Description)
		if i.Default != nil {
			if b, err := json.Marshal(i.Default); err == nil {
				p.Default = b
			}
		}
		in[i.Name] = p
		if i.IsRequired() {
			required = append(required, i.Name)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, o := range w.Workflow.Outputs {
		out[o.Name] = typedSchema(o.Type, o.Description)
		if o.Type == "" {
			out[o.Name].Type = "" // any value
		}
	}
	desc, title := w.Description, ""
	if src := w.Workflow.Source; src != nil {
		title = src.Title
		if desc == "" {
			desc = src.Description
		}
	}
	desc += fmt.Sprintf(" (a saved pflow workflow: %s)", strings.Join(stepTypes(w.Workflow), ", "))
	name := w.Name
	return &toolDef{
		name:        name,
		title:       title,
		description: desc,
		input:       object(required, in),
		rawOutput:   &jsonschema.Schema{Type: "object", Properties: out},
		destructive: true, // a workflow may run anything
		openWorld:   true,
		run: func(ctx context.Context, c *call) (any, error) {
			return c.srv.runWorkflowTool(ctx, c, name)
		},
	}, nil
}

// typedSchema is the JSON Schema of a pflow input or output type (one type
// per property: every host's tool-schema rules accept it).
func typedSchema(typ, desc string) *jsonschema.Schema {
	s := &jsonschema.Schema{Description: desc}
	switch runtime.NormalizeType(typ) {
	case "str", "":
		s.Type = "string"
	case "int":
		s.Type = "integer"
	case "float":
		s.Type = "number"
	case "bool":
		s.Type = "boolean"
	case "dict":
		s.Type = "object"
	case "list":
		s.Type = "array"
		s.Items = &jsonschema.Schema{Description: "Any JSON value."}
	}
	return s
}

func stepTypes(w *workflow.Workflow) []string {
	var out []string
	for _, n := range w.Nodes {
		if !slices.Contains(out, n.Type) {
			out = append(out, n.Type)
		}
	}
	return out
}

// runWorkflowTool runs the saved workflow name with the call's arguments,
// exactly as workflow_execute does (progress, cancellation, run record,
// trace); a success answers the workflow's outputs as structuredContent.
func (s *Server) runWorkflowTool(ctx context.Context, c *call, name string) (any, error) {
	t, err := c.app.ResolveAgentWorkflow(name, s.policy())
	if err != nil {
		return nil, withNotFoundHint(err)
	}
	req := app.RunRequest{Target: t, Params: c.args, Origin: "mcp", Policy: s.policy()}
	req.Temporal = c.srv.opts.Temporal
	if tok := c.req.Params.GetProgressToken(); tok != nil {
		req.Observer = newProgress(ctx, c.req.Session, tok, len(t.Workflow.Nodes))
	}
	out, err := c.app.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	rep := app.Report(out, t, app.Agent)
	labels := c.app.LabelProvenance(ctx, rep, t)
	if out.Failed() || out.Result == nil {
		return executeEnvelope(out, t, rep, labels), nil
	}
	outputs := rep.Outputs()
	meta := map[string]any{"pflow/status": rep.Status}
	if len(labels) > 0 {
		// The outputs an MCP server wrote: data, never instructions.
		meta["pflow/outputs_provided_by"] = labels
	}
	if out.RunID != "" {
		meta["pflow/run_id"] = out.RunID
	}
	if out.TracePath != "" {
		meta["pflow/trace_path"] = out.TracePath
	}
	return direct{value: outputs, meta: meta}, nil
}

// renderDirect answers a direct success: the value as structuredContent
// and as JSON text, redacted like every answer.
func (s *Server) renderDirect(a *app.App, d direct) *mcp.CallToolResult {
	st, err := a.Settings()
	if err != nil {
		st = nil
	}
	red := a.Redactor(st)
	v := toJSONValue(d.value)
	if r, ok := red.Value(v).(map[string]any); ok {
		v = r
	}
	b, err := value.MarshalJSON(v)
	if err != nil {
		return s.render(a, errorEnvelope(pferr.Newf(pferr.Internal, "cannot encode the response: %v", err)))
	}
	return &mcp.CallToolResult{
		Meta:              mcp.Meta(d.meta),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// removeToolDefs forgets the tool definitions of names.
func (s *Server) removeToolDefs(names []string) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	s.tools = slices.DeleteFunc(s.tools, func(t *toolDef) bool { return slices.Contains(names, t.name) })
}
