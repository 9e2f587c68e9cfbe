// Package mcpnode implements the one node type that serves every MCP tool
// registered as "mcp-<server>-<tool>" (see docs/decisions.md, "Names of servers
// and tools").
package mcpnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/stepkeys"
)

// Config configures the MCP node.
type Config struct {
	// ServersPath is the path of mcp-servers.json.
	ServersPath string
	// Env looks up variables for ${VAR} expansion (process env, then settings env).
	Env func(string) (string, bool)
	// Log receives warnings (undefined variables, server stderr hints).
	Log io.Writer
	// Pool keeps sessions open across runs in a long-lived process (nil:
	// each run starts and stops its servers; see
	// docs/decisions.md, "One MCP session per server per run").
	Pool *mcpclient.Pool
	// SchemaHash returns the input-schema hash a node type was synced with
	// ("" when unknown): a live tool whose schema differs gets a warning.
	SchemaHash func(nodeType string) string
	// Sample answers the sampling requests of servers configured with
	// "sampling": true (pflow's configured LLM).
	Sample mcpclient.Sampler
}

type mcpNode struct{ cfg Config }

// New returns the node serving every mcp-* type.
func New(cfg Config) node.Node { return &mcpNode{cfg: cfg} }

// Injected params (set by the runtime from the registry entry).
const (
	ParamServer = "__mcp_server__"
	ParamTool   = "__mcp_tool__"
)

// ArgsParam is the step's block of tool arguments passed verbatim: the way
// to pass an argument named like a step key or control (type, timeout,
// retries, retry_wait), e.g. '- args: {type: jpeg}'.
const ArgsParam = stepkeys.Args

// ToolArgs returns the params that become tool arguments: everything but
// the "__mcp_…__" bindings and the node controls such as timeout, then the
// entries of the args block, which win.
func ToolArgs(params map[string]any) map[string]any {
	out := map[string]any{}
	block, hasBlock := params[ArgsParam].(map[string]any)
	for k, v := range params {
		if strings.HasPrefix(k, "__") || stepkeys.Consumed(k, true, true) || (hasBlock && k == ArgsParam) {
			continue
		}
		out[k] = v
	}
	for k, v := range block {
		out[k] = v
	}
	return out
}

// Fingerprint returns the node.Spec.Fingerprint of the MCP node types n
// serves: the identity the step's server is reached as (mcpclient.Identity:
// its effective config, credentials included). The step cache keys on it,
// so a server whose token changes from one user's to another's never
// serves the first user's entries to the second, and a resume runs the
// step again. n must be a node New returned.
func Fingerprint(n node.Node) func(*node.Request) string {
	m, ok := n.(*mcpNode)
	if !ok {
		return nil
	}
	return func(req *node.Request) string {
		env := req.Env
		if env == nil {
			env = m.cfg.Env
		}
		server := node.String(req.Extra, registry.ExtraMCPServer, node.String(req.Params, ParamServer, ""))
		if server == "" {
			if f, err := mcpclient.LoadFileShared(m.cfg.ServersPath); err == nil {
				server, _, _ = mcpclient.ParseNodeType(req.Type, f.Names())
			}
		}
		identify := func() (io.Closer, error) {
			return identity(mcpclient.Identity(m.cfg.ServersPath, server, env)), nil
		}
		if req.Scope == nil {
			c, _ := identify()
			return "mcp-server:" + string(c.(identity))
		}
		// Once per server and run: the run keeps one session per server,
		// opened with the config of that moment, and resolving the config
		// for every step cost 50 µs a step (BenchmarkRecordOverheadWork).
		c, err := req.Scope.Resource("mcp-identity\x00"+server, identify)
		if err != nil {
			c, _ = identify()
		}
		return "mcp-server:" + string(c.(identity))
	}
}

// identity is a server's identity kept in a run's scope.
type identity string

func (identity) Close() error { return nil }

func (n *mcpNode) Run(ctx context.Context, req *node.Request) (*node.Result, error) {
	env := req.Env
	if env == nil {
		env = n.cfg.Env
	}
	log := req.Log
	if log == nil {
		log = n.cfg.Log
	}
	if log == nil {
		log = io.Discard
	}
	// The server and tool come from the registry entry (req.Extra); a
	// compiled node (Inject) carries them as params.
	server := node.String(req.Extra, registry.ExtraMCPServer, node.String(req.Params, ParamServer, ""))
	tool := node.String(req.Extra, registry.ExtraMCPTool, node.String(req.Params, ParamTool, ""))
	details := func() map[string]any {
		return map[string]any{"error_details": map[string]any{"server": server, "tool": tool}}
	}
	if server == "" || tool == "" {
		f, err := mcpclient.LoadFile(n.cfg.ServersPath)
		if err != nil {
			return node.Fail(mcpclient.ErrorText(err), details()), nil
		}
		server, tool, err = mcpclient.ParseNodeType(req.Type, f.Names())
		if err != nil {
			return node.Fail(mcpclient.ErrorText(err), details()), nil
		}
	}
	timeout, err := node.Duration(req.Params, "timeout", 0)
	if err != nil || (req.Params["timeout"] != nil && timeout <= 0) {
		return node.Fail("Invalid 'timeout' parameter: "+node.String(req.Params, "timeout", "")+". Must be a positive number of seconds (e.g. 60) or a duration (e.g. 2m).", details()), nil
	}
	if timeout > mcpclient.MaxTimeoutSeconds*time.Second {
		return node.Fail("Invalid 'timeout' parameter: it cannot exceed 600 seconds (10 minutes).", details()), nil
	}

	// failed is a failure with its error class (an edge may route on it).
	failed := func(msg, class string) *node.Result {
		out := details()
		if class != "" {
			out["error_class"] = class
		}
		r := node.Fail(msg, out)
		r.Class = class
		return r
	}
	// failedErr is the failure of a session error; a retry (the step's
	// retries) waits what the server asked for (Retry-After).
	failedErr := func(err error) *node.Result {
		r := failed(mcpclient.ErrorText(err), mcpclient.ErrorClass(err))
		r.RetryAfter = mcpclient.RetryAfter(err)
		// A refused address or a pin mismatch fails once, never retried.
		r.Permanent = mcpclient.Permanent(err)
		return r
	}
	var conn *mcpclient.Conn
	if req.Scope != nil {
		r, err := req.Scope.Resource("mcp:"+server, func() (io.Closer, error) {
			c := mcpclient.NewConn(n.cfg.ServersPath, server, env, log)
			c.Pool, c.Sample, c.Network = n.cfg.Pool, n.cfg.Sample, req.Network
			return c, nil
		})
		if err != nil {
			return failed(mcpclient.ErrorText(err), mcpclient.ErrorClass(err)), nil
		}
		c, ok := r.(*mcpclient.Conn)
		if !ok {
			return nil, errors.New("mcp: scope resource for server " + server + " has an unexpected type")
		}
		conn = c
	} else {
		conn = mcpclient.NewConn(n.cfg.ServersPath, server, env, log)
		conn.Sample, conn.Network = n.cfg.Sample, req.Network
		defer conn.Close()
	}
	sess, err := conn.Session(ctx)
	if err != nil {
		return failedErr(err), nil
	}
	t, err := sess.Tool(ctx, tool)
	if err != nil {
		return failedErr(err), nil
	}
	var drift []string
	if n.cfg.SchemaHash != nil {
		if want := n.cfg.SchemaHash(req.Type); want != "" && want != sess.InputSchemaHash(t) {
			drift = append(drift, fmt.Sprintf("MCP tool %s of server %s changed since it was synced (its parameters differ from the registry's): run 'pflow mcp sync %s', then run 'pflow registry validate --all' to check the workflows that use it", t.Name, server, server))
		}
	}
	args, err := sess.CoerceArgs(t, ToolArgs(req.Params))
	if err != nil {
		return failed(err.Error()+" (server '"+server+"')", node.ClassInvalidParams), nil
	}
	// A server's question during the call names this step.
	res, err := sess.CallTool(mcpclient.WithStep(ctx, req.NodeID), t.Name, args, timeout)
	logs := sess.DrainLogs()
	if err != nil {
		r := failedErr(err)
		r.Logs = logs
		return r, nil
	}
	if mcpclient.ResultTooDeep(res) {
		r := failed(fmt.Sprintf("MCP result too deeply nested: tool '%s' of server '%s' returned arrays or objects nested more than %d levels deep, "+
			"which pflow refuses to keep a run's memory and time bounded. Ask the tool for a flatter result (a summary, a page, fewer levels), "+
			"or have it return the data as a file or as text that is not JSON.", t.Name, server, mcpclient.MaxResultDepth), node.ClassServerError)
		r.Permanent = true
		r.Logs = logs
		return r, nil
	}
	if err := sess.ValidateStructured(t, res); err != nil {
		return failed(err.Error()+" (server '"+server+"')", node.ClassServerError), nil
	}
	ex := mcpclient.ExtractResult(res)
	if ex.IsError {
		r := failed(ex.Message, node.ClassToolError)
		r.Outputs["error_details"].(map[string]any)["is_tool_error"] = true
		r.Logs = logs
		return r, nil
	}
	ok := node.Ok(Outputs(ex.Result))
	ok.Warnings, ok.Logs = drift, logs
	return ok, nil
}

// Outputs builds the node's outputs from a result (see docs/decisions.md,
// "Result extraction"): result, plus every
// top-level field of an object result hoisted (never result/error or keys
// starting with "_").
func Outputs(result any) map[string]any {
	out := map[string]any{"result": result}
	if m, ok := result.(map[string]any); ok {
		for k, v := range m {
			if k == "result" || k == "error" || strings.HasPrefix(k, "_") {
				continue
			}
			out[k] = v
		}
	}
	return out
}

// Inject returns params with __mcp_server__ and __mcp_tool__ set for a node
// type starting with "mcp-" (the values come from the registry entry and
// overwrite user-supplied ones) and params unchanged for any other type. The
// caller's map is never modified.
func Inject(nodeType, server, tool string, params map[string]any) map[string]any {
	if !strings.HasPrefix(nodeType, "mcp-") || server == "" || tool == "" {
		return params
	}
	out := make(map[string]any, len(params)+2)
	for k, v := range params {
		out[k] = v
	}
	out[ParamServer] = server
	out[ParamTool] = tool
	return out
}
