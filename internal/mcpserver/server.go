// Package mcpserver is pflow's MCP server (`pflow mcp serve`): 16 tools and two
// instruction resources that let an agent without a shell discover, build,
// validate, run and save workflows. Every tool is a thin face over a use-case
// in internal/app; nothing here decides how a workflow is run, saved or
// found. Each call reads fresh state from disk, so concurrent calls never see
// each other's state.
//
// Every tool answers with the JSON envelope as structuredContent and the
// same JSON as a text block:
//
//	{"success": true,  "data": {...}, "trace_path": "..."}
//	{"success": false, "error": {"type", "message", "details", "suggestions"}, ...}
//
// Failures are isError results, never JSON-RPC errors. Error types are
// validation, execution, not_found and security.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/instructions"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/value"
)

// Error types of the error envelope.
const (
	ErrValidation = app.ErrValidation
	ErrExecution  = app.ErrExecution
	ErrNotFound   = app.ErrNotFound
	ErrSecurity   = app.ErrSecurity
)

// Options configure a Server.
type Options struct {
	// App is the environment every use-case runs in. It holds no cache, so
	// one App serves every request.
	App *app.App
	// Version is reported as serverInfo.version.
	Version string
	// HTTP marks a server reachable over HTTP: file paths are refused unless
	// AllowDirs covers them.
	HTTP bool
	// AllowDirs are the directories file paths may name in HTTP mode.
	AllowDirs []string
	// Log receives one diagnostic line per call (tool, outcome, duration) and
	// server events; never arguments or values. Nil discards.
	Log io.Writer
	// ServerIdle is how long an MCP server a workflow used stays running,
	// unused, for the next run (0: mcpclient.DefaultIdleTimeout). Servers are
	// pooled across runs unless their config says "keep_alive": false.
	ServerIdle time.Duration
	// WorkflowTools publishes every saved workflow as a tool of its own,
	// kept in step with the library; Workflows, when set, publishes only
	// those. NoBuilderTools leaves out the 16 tools that discover, build and
	// save workflows. With Workflows or NoBuilderTools the server is
	// focused: its resources are only the workflows it publishes and their
	// runs.
	WorkflowTools  bool
	Workflows      []string
	NoBuilderTools bool
	// Temporal, when set, runs every workflow on that Temporal service
	// (many agents sharing one execution service).
	Temporal *app.TemporalRequest
}

// Server is pflow's MCP server.
type Server struct {
	opts    Options
	mcp     *mcp.Server
	toolsMu sync.Mutex
	tools   []*toolDef

	wfMu    sync.Mutex
	wfTools map[string]string // published workflow tools: name -> signature

	resMu     sync.Mutex
	resources map[string]string // listed library resources: URI -> signature

	base     context.Context
	cancel   context.CancelFunc
	inflight sync.WaitGroup
	logMu    sync.Mutex

	bg backgroundRuns // runs of workflow_execute background: true (tools_runs.go)
}

// New builds the server with every tool and resource registered.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	// One pool of warm MCP sessions for every run this server makes.
	a := *opts.App
	a.MCPPool = mcpclient.NewPool(opts.ServerIdle, opts.Log)
	// A run's trace and the retention housekeeping are written after it
	// has answered.
	a.Afterwards = app.NewAfterwards()
	// Saved workflows' run history is written a second after their runs.
	a.RunHistory = library.NewHistory(a.Library(), time.Second, opts.Log)
	// The first run's record directory is made now (runs.Standby).
	a.RunStandby = &runs.Standby{}
	a.Afterwards.Do(func() { a.RunStandby.Refill(a.RunStore()) })
	opts.App = &a
	s := &Server{opts: opts, wfTools: map[string]string{}, resources: map[string]string{}}
	s.base, s.cancel = context.WithCancel(context.Background())
	guide := instructions.Server()
	if opts.NoBuilderTools {
		guide = focusedInstructions
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "pflow", Title: "pflow workflows", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: guide,
		// Tools and resources change with the library: clients are told.
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{},
			Tools: &mcp.ToolCapabilities{ListChanged: true}, Resources: &mcp.ResourceCapabilities{ListChanged: true}},
	})
	if !opts.NoBuilderTools {
		for _, t := range s.toolDefs() {
			s.addTool(t)
		}
	}
	s.addResources()
	if opts.WorkflowTools || len(opts.Workflows) > 0 {
		s.syncWorkflowTools()
	}
	s.syncLibraryResources()
	s.watchLibrary()
	return s
}

// focusedInstructions are the initialize instructions of a server without
// the builder tools (the general ones name those tools and guides).
const focusedInstructions = "This pflow server publishes saved workflows as tools: call a workflow by its tool name with its inputs; " +
	"it answers the workflow's outputs (the run id is in _meta[\"pflow/run_id\"]). Each workflow's markdown is the resource " +
	"pflow://workflows/<name>, and its runs are pflow://runs/<id> (pflow://runs/last: the newest)."

// MCP returns the underlying go-sdk server (for transports and tests).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Shutdown cancels every running tool call (their workflows stop and their
// processes are killed) and waits for them to return.
func (s *Server) Shutdown() {
	s.cancel()
	s.inflight.Wait()
	s.opts.App.Afterwards.Settle() // every trace written
	s.opts.App.RunStandby.Close()
	s.opts.App.RunHistory.Flush()
	// Then the warm MCP servers, and everything they started.
	s.opts.App.MCPPool.Close()
}

// Pool is the server's pool of warm MCP sessions.
func (s *Server) Pool() *mcpclient.Pool { return s.opts.App.MCPPool }

// policy is the file-path policy for this server's transport.
func (s *Server) policy() app.PathPolicy {
	return app.PathPolicy{Restrict: s.opts.HTTP, AllowDirs: s.opts.AllowDirs}
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "pflow mcp: "+format+"\n", args...)
}

// toolDef is one tool: metadata, schemas and the handler.
type toolDef struct {
	name        string
	title       string
	description string
	input       *jsonschema.Schema
	// data is the schema of the success envelope's "data".
	data *jsonschema.Schema
	// rawOutput, when set, is the whole output schema (a workflow tool's
	// outputs), answered as a direct value instead of the envelope.
	rawOutput   *jsonschema.Schema
	readOnly    bool
	destructive bool
	idempotent  bool
	openWorld   bool
	// run returns the "data" of a success envelope, or an error rendered as
	// an error envelope. A handler that needs extra top-level keys returns
	// an *envelope.
	run func(ctx context.Context, c *call) (any, error)

	resolved *jsonschema.Resolved
}

// call is one tool invocation.
type call struct {
	req  *mcp.CallToolRequest
	args map[string]any
	app  *app.App
	srv  *Server
}

func (c *call) str(k string) string {
	v, _ := c.args[k].(string)
	return v
}

func (c *call) boolean(k string) bool {
	v, _ := c.args[k].(bool)
	return v
}

func (c *call) object(k string) map[string]any {
	v, _ := c.args[k].(map[string]any)
	return v
}

// envelope lets a handler return a complete envelope (success or failure).
type envelope map[string]any

func (s *Server) addTool(t *toolDef) {
	rs, err := t.input.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.name, err))
	}
	t.resolved = rs
	s.toolsMu.Lock()
	s.tools = append(s.tools, t)
	s.toolsMu.Unlock()
	ro, destr, idem, open := t.readOnly, t.destructive, t.idempotent, t.openWorld
	out := envelopeSchema(t.data)
	if t.rawOutput != nil {
		out = t.rawOutput
	}
	tool := &mcp.Tool{
		Name:         t.name,
		Title:        t.title,
		Description:  t.description,
		InputSchema:  t.input,
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    ro,
			DestructiveHint: &destr,
			IdempotentHint:  idem,
			OpenWorldHint:   &open,
		},
	}
	s.mcp.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.handle(ctx, t, req), nil
	})
}

// handle runs one tool call: decode and validate arguments, run the
// use-case, render the envelope (redacted) as structuredContent + text.
func (s *Server) handle(ctx context.Context, t *toolDef, req *mcp.CallToolRequest) (res *mcp.CallToolResult) {
	s.inflight.Add(1)
	defer s.inflight.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()

	start := time.Now()
	// The call's secrets (its parameters, its runs' inputs and params) are
	// masked in everything it outputs and forgotten when it ends.
	a := s.opts.App.Scoped()
	var env map[string]any
	defer func() {
		if r := recover(); r != nil {
			s.logf("%s: internal error: %v\n%s", t.name, r, debug.Stack())
			env = errorEnvelope(&pferr.Error{Kind: pferr.Internal,
				Message: fmt.Sprintf("internal error in %s: %v", t.name, r),
				Hint:    "This is a bug in pflow; please report it with the tool arguments (minus secrets)."})
			res = s.render(a, env)
		}
		outcome := "ok"
		if env != nil && env["success"] != true {
			switch e := env["error"].(type) {
			case *app.ErrorReport:
				outcome = e.Type
			case map[string]any:
				outcome = fmt.Sprint(e["type"])
			}
		}
		s.logf("%s -> %s (%s)", t.name, outcome, time.Since(start).Round(time.Millisecond))
	}()

	args, err := decodeArgs(t, req.Params.Arguments)
	if err != nil {
		env = errorEnvelope(err)
		return s.render(a, env)
	}
	data, err := t.run(ctx, &call{req: req, args: args, app: a, srv: s})
	if d, ok := data.(direct); ok && err == nil {
		return s.renderDirect(a, d)
	}
	if ir, ok := data.(inputRequired); ok && err == nil { // ask.go
		return ir.res
	}
	switch {
	case err != nil:
		env = errorEnvelope(err)
	default:
		if e, ok := data.(envelope); ok {
			env = e
		} else {
			env = map[string]any{"success": true, "data": data}
		}
	}
	return s.render(a, env)
}

// render redacts env and turns it into a tool result.
func (s *Server) render(a *app.App, env map[string]any) *mcp.CallToolResult {
	// Unreadable settings still redact the secrets in pflow's environment.
	st, err := a.Settings()
	if err != nil {
		st = nil
	}
	red := a.Redactor(st)
	env = toJSONValue(env)
	if r, ok := red.Value(env).(map[string]any); ok {
		env = r
	}
	b, err := value.MarshalJSON(env)
	if err != nil {
		env = errorEnvelope(pferr.Newf(pferr.Internal, "cannot encode the response: %v", err))
		b, _ = value.MarshalJSON(env)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           env["success"] != true,
	}
}

// toJSONValue turns structs and typed slices into the canonical value model
// so redaction sees every string.
func toJSONValue(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	v, err := value.DecodeJSON(b)
	if err != nil {
		return m
	}
	out, ok := v.(map[string]any)
	if !ok {
		return m
	}
	return out
}

// decodeArgs parses and validates the arguments against the tool's schema.
// Object- and array-typed arguments sent as JSON strings (a habit of some
// clients) are parsed first.
func decodeArgs(t *toolDef, raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		v, err := value.DecodeJSON(raw)
		if err != nil {
			return nil, pferr.Newf(pferr.Validation, "arguments of %s are not valid JSON: %v", t.name, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, pferr.Newf(pferr.Validation, "arguments of %s must be a JSON object, got %s", t.name, value.TypeName(v)).
				WithHint("Send the arguments as an object keyed by argument name, e.g. {} for none.")
		}
		args = m
	}
	// A client that learnt the older schema may still put a JSON IR object
	// in workflow: it is taken as workflow_ir.
	if m, ok := args["workflow"].(map[string]any); ok && t.input.Properties["workflow_ir"] != nil && args["workflow_ir"] == nil {
		args["workflow_ir"] = m
		delete(args, "workflow")
	}
	for k, p := range t.input.Properties {
		sv, isStr := args[k].(string)
		if !isStr || allowsString(p) {
			continue
		}
		if pv, ok := value.TryParseContainer(sv); ok {
			args[k] = pv
		}
	}
	// Validate a plain-JSON copy (the validator expects float64 numbers).
	var plain any
	b, _ := json.Marshal(args)
	_ = json.Unmarshal(b, &plain)
	if err := t.resolved.Validate(plain); err != nil {
		return nil, &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("invalid arguments for %s: %s", t.name, cleanSchemaError(err)),
			Details: map[string]any{"input_schema": schemaSummary(t.input)},
			Hint:    "Check the argument names and types against the tool's input schema (details.input_schema)."}
	}
	for k, p := range t.input.Properties {
		if _, ok := args[k]; !ok && p.Default != nil {
			var d any
			if json.Unmarshal(p.Default, &d) == nil {
				if nv, err := value.DecodeJSON(p.Default); err == nil {
					d = nv
				}
				args[k] = d
			}
		}
	}
	return args, nil
}

func allowsString(p *jsonschema.Schema) bool {
	if p.Type == "string" || p.Type == "" && len(p.Types) == 0 {
		return true
	}
	for _, t := range p.Types {
		if t == "string" {
			return true
		}
	}
	return false
}

func cleanSchemaError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "validating root: ")
	msg = strings.ReplaceAll(msg, "validating /properties/", "argument ")
	return msg
}

// schemaSummary lists argument names with their types for error details.
func schemaSummary(s *jsonschema.Schema) map[string]any {
	props := map[string]any{}
	for k, p := range s.Properties {
		typ := p.Type
		if typ == "" {
			typ = strings.Join(p.Types, "|")
		}
		props[k] = typ
	}
	return map[string]any{"properties": props, "required": s.Required}
}

// errorEnvelope renders err as the failure envelope, worded for an agent.
func errorEnvelope(err error) map[string]any {
	return failureEnvelope(app.ReportError(err, app.Agent))
}

// failureEnvelope is the failure envelope of an error object.
func failureEnvelope(e *app.ErrorReport) envelope {
	f := app.Failure(e)
	return envelope{"success": f.Success, "error": f.Error}
}
