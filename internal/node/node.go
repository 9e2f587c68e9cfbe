// Package node defines the contract between the runtime and every node type
// (shell, http, file, llm, code, mcp, ...): the interface metadata a node
// declares, the request it receives and the result it returns.
//
// Failure convention:
//   - A node that ran and failed in a way the workflow should see returns a
//     Result with Action "error" and Outputs["error"] set to a message that
//     says what went wrong and how to fix it. Such results are not retried
//     unless Result.Retryable is set or the step sets retries, and never when
//     Result.Permanent is set.
//   - A node that could not run (bad params, network error, exception) returns
//     a Go error. The runtime retries it up to Spec.Attempts times and then
//     fails the node with the error's message on the "error" action.
//
// Either way ${node.error} holds the message and the workflow stops unless an
// edge handles the "error" action.
package node

import (
	"context"
	"io"
	"time"

	"github.com/pflow-go/pflow/internal/netpolicy"
)

// Field describes one param or output of a node interface.
type Field struct {
	Key         string `json:"key"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
	Enum        []any  `json:"enum,omitempty"`
	// Structure describes the fields of a dict output, or of the items of a
	// list output (list[dict]).
	Structure []Field `json:"structure,omitempty"`
	// Sink says how template values reach a param whose text is executed or
	// parsed (a shell command, source code, a URL). Empty means data: values
	// are pasted into text or keep their type.
	Sink Sink `json:"sink,omitempty"`
	// Also are other tools' names for this param (curl's "data", requests'
	// "json"): a step that writes one is told this param's key.
	Also []string `json:"-"`
}

// Sink is how template values reach a param that is not plain data
// (template values are data in every sink: see docs/decisions.md, "Template
// values are data").
type Sink string

const (
	// SinkShell binds each value to an environment variable of the step's
	// process and references it from the command (see internal/sink).
	SinkShell Sink = "shell"
	// SinkCode refuses templates in source code: values are passed as bound
	// inputs instead.
	SinkCode Sink = "code"
	// SinkURL percent-encodes each value for the part of the URL it lands in.
	SinkURL Sink = "url"
	// SinkPath pastes each value into a file path, but refuses a ".." path
	// segment made with a value's bytes: data stays inside the folder the
	// author wrote (opt out per step with allow_parent_paths: true).
	SinkPath Sink = "path"
	// SinkLiteral refuses templates: the param chooses the code that runs
	// (a nested workflow's file, name or IR), which data must not choose.
	SinkLiteral Sink = "literal"
	// SinkExpr keeps the param as written: it holds conditions (package
	// cond) whose templates the node binds as variables and evaluates over
	// Request.Shared, so a value is never read as expression source.
	SinkExpr Sink = "expr"
)

// UnsafeSpliceParam is the step param that opts a step out of its sinks'
// protection: template values are pasted into the command or source as text.
const UnsafeSpliceParam = "unsafe_splice"

// Interface is the metadata validation, the registry and docs use.
type Interface struct {
	Description string   `json:"description"`
	Params      []Field  `json:"params"`
	Outputs     []Field  `json:"outputs"`
	Actions     []string `json:"actions"`
	// ExtraParams is true when the node takes params beyond Params (an MCP
	// tool whose input schema sets additionalProperties): an unknown param
	// is passed on instead of being an error.
	ExtraParams bool `json:"extra_params,omitempty"`
}

// Param returns the declared param with key k.
func (i *Interface) Param(k string) (Field, bool) {
	for _, f := range i.Params {
		if f.Key == k {
			return f, true
		}
	}
	return Field{}, false
}

// Output returns the declared output with key k.
func (i *Interface) Output(k string) (Field, bool) {
	for _, f := range i.Outputs {
		if f.Key == k {
			return f, true
		}
	}
	return Field{}, false
}

// Spec is a node type: its metadata and how to run it.
type Spec struct {
	// Type is the node type name used in workflows ("shell", "read-file", "mcp-github-create-issue").
	Type string
	// Group is the package it is listed under ("shell", "http", "file", "llm", ...).
	Group     string
	Interface Interface
	// Attempts is the total number of tries for Go-error failures (see
	// docs/decisions.md, "Retries per node type"); 0 means 1.
	Attempts int
	// RetryWait is the pause between attempts.
	RetryWait time.Duration
	// Hidden nodes (test nodes) are usable but not listed.
	Hidden bool
	// Node runs the type. Implementations must be safe for concurrent use:
	// parallel batch items call Run concurrently.
	Node Node
	// Extra carries type-specific registry data (e.g. MCP server and tool names).
	Extra map[string]any
	// StdinParam is the param piped data fills when the node is called on
	// its own from the command line (shell's stdin, llm's prompt), and the
	// param a previous node's MainOutput feeds in a '>>' chain. Empty: the
	// node has no main input.
	StdinParam string
	// MainOutput is the output a '>>' chain passes on to the next node and
	// a direct call prints (shell's stdout, llm's response). Empty: the node
	// has no main output.
	MainOutput string
	// Inline nodes only compute over their params and the shared store (no
	// I/O, no clock), or ask through the run's Asker: a durable engine runs
	// them in its workflow code instead of as an activity (where its Asker
	// waits for a signal).
	Inline bool
	// Check, when set, inspects a step's literal params before any run (static
	// validation), e.g. the code node's Python syntax check.
	Check func(ctx context.Context, params map[string]any) []Problem
	// Effects says what running the node does beyond returning outputs: it
	// decides whether a step may run again after a crash and whether its
	// results may be cached (see docs/decisions.md, "Recorded, resumable runs
	// and the step cache"). The zero value (may have side
	// effects) is the safe default.
	Effects Effects
	// Fingerprint, when set, describes data the node reads besides its params
	// (e.g. read-file: the file's size and modification time) for a request
	// about to run. A resume runs a completed step again when its fingerprint
	// changed, and the step cache keys on it. It must be cheap.
	Fingerprint func(req *Request) string
	// StepActions, when set, lists the actions a step of this type can take
	// with the step's literal params (the ask node: one action per choice; a switch: its cases and default),
	// instead of Interface.Actions (which lists those of the defaults).
	// Validation accepts edges on them.
	StepActions func(params map[string]any) []string
}

// Effects describes what running a node does to the world besides returning
// its outputs. Every field false means the node may have side effects.
type Effects struct {
	// ReadOnly nodes change nothing outside pflow (reading a file, an LLM
	// answer): running one again is harmless.
	ReadOnly bool `json:"read_only,omitempty"`
	// Idempotent nodes may change things, but running one twice with the same
	// params leaves the world as running it once does.
	Idempotent bool `json:"idempotent,omitempty"`
	// Pure nodes' outputs depend only on their params: a step of one may be
	// served from the step cache instead of running.
	Pure bool `json:"pure,omitempty"`
	// Cache makes steps of this type use the step cache without opting in
	// (only meaningful with Pure; for nodes whose work is worth keeping).
	Cache bool `json:"cache,omitempty"`
}

// SafeToRepeat reports whether running the node again (after a crash, on a
// resume) cannot do harm: it is read-only, idempotent or pure.
func (e Effects) SafeToRepeat() bool { return e.ReadOnly || e.Idempotent || e.Pure }

// Replayed reports whether a run's record leaves out what the node gives,
// and a resume runs it again instead: it is pure and does no work worth
// keeping (echo, switch; not a node that caches by default, such as a
// trusted read-only MCP tool). Run again on the same inputs, it gives what
// it gave before.
func (e Effects) Replayed() bool { return e.Pure && !e.Cache }

// Problem is a finding of a Spec's static Check.
type Problem struct {
	// Param is the param the problem is in.
	Param string
	// Line is the 1-based line inside the param's text (0 when unknown); for
	// a param written as a fenced block it maps to a line of the file.
	Line    int
	Message string
	Hint    string
}

// Node executes one step.
type Node interface {
	Run(ctx context.Context, req *Request) (*Result, error)
}

// Func adapts a function to Node.
type Func func(ctx context.Context, req *Request) (*Result, error)

// Run calls f.
func (f Func) Run(ctx context.Context, req *Request) (*Result, error) { return f(ctx, req) }

// Request is what a node receives for one execution.
type Request struct {
	// NodeID is the step id in the workflow ("" for registry run).
	NodeID string
	// Type is the node type as written in the workflow.
	Type string
	// Params are the step's params with templates resolved and values coerced
	// to the declared types. Engine controls (retries, retry_wait, cache) are
	// removed; nothing is injected. Nodes must not modify it: the run
	// record reads it after the node ran.
	Params map[string]any
	// Extra is the node type's own data from the registry (Spec.Extra): for
	// an MCP tool, the server and tool it calls. Read-only.
	Extra map[string]any
	// Shared is a read-only view of the shared store root (inputs and node namespaces).
	Shared map[string]any
	// WorkflowDir is the directory of the workflow file ("" when unknown);
	// relative paths in params resolve against it where a node says so.
	WorkflowDir string
	// Env looks up configuration values: the process environment, then settings env.
	Env func(key string) (string, bool)
	// Log receives human-readable diagnostics (stderr in the CLI, discarded in MCP serve).
	Log io.Writer
	// Scope holds resources shared by every node of one run (e.g. MCP sessions).
	Scope Scope
	// Attempt is the 1-based attempt number.
	Attempt int
	// SourceLines are the .pflow.md lines of the step's params that came from
	// a code block (the line of the block's first line), by param; a node
	// maps its own errors to the workflow file with them (typed,
	// not injected as params).
	SourceLines map[string]int
	// WorkflowFile is the workflow's file ("" for an inline workflow).
	WorkflowFile string
	// TemplateEnv holds the template values of shell-sink params, bound to
	// environment variables that the param's text references (name → value).
	// A node that runs such a param must add them to its process environment.
	TemplateEnv map[string]string
	// Redact masks the run's known secrets in a text (nil: none known). A
	// node that shortens text it reports (an error body's first lines)
	// masks it first, so a cut never leaves part of a secret behind.
	Redact func(string) string
	// Routed is true when the workflow routes this step's failures to
	// another step (an error or error-class edge): a failure message then
	// suggests no way to make the step succeed instead.
	Routed bool
	// Network bounds the addresses the node may connect to (nil: no
	// bounds beyond the node's own).
	Network *NetPolicy
}

// NetPolicy is where a run's network nodes (and the MCP servers it
// reaches over the network) may connect: see netpolicy.Policy.
type NetPolicy = netpolicy.Policy

// Scope gives nodes access to resources that live as long as one workflow run
// (including nested workflows and batch items) and are closed when it ends.
type Scope interface {
	// Resource returns the resource stored under key, calling open to create it
	// on first use. Concurrent callers for the same key get the same resource.
	// Every opened resource is closed when the run ends.
	Resource(key string, open func() (io.Closer, error)) (io.Closer, error)
}

// Result is a node's outcome.
type Result struct {
	// Outputs are written to the node's namespace (${id.key}).
	Outputs map[string]any
	// Action selects the next edge; "" means "default". "error" means the node failed.
	Action string
	// Retryable marks an error result as worth retrying (e.g. HTTP 429/5xx).
	Retryable bool
	// Permanent marks an error result that no retry can change (e.g. a
	// request that is refused before sending because a header value holds a
	// line break): the runtime does not retry it, even when the step sets
	// retries.
	Permanent bool
	// Class says what kind of failure an error result is (one of
	// ErrorClasses): an edge may route on it ('on: {rate_limited: wait}'),
	// falling back to the error edge; ${step.error_class} holds it.
	Class string
	// RetryAfter is how long the service asked the caller to wait before
	// trying again (HTTP Retry-After); a retry waits at least this long.
	RetryAfter time.Duration
	// Warnings are things the run should report though the step went on
	// (an MCP tool that changed since it was synced); they make the run
	// degraded.
	Warnings []string
	// Logs are what the node's service logged while the step ran (an MCP
	// server's notifications/message): kept in the trace, shown with -v.
	Logs []string
}

// Error classes of failed http and MCP steps (see docs/decisions.md, "Error
// classes as actions").
const (
	ClassRateLimited   = "rate_limited"
	ClassAuthFailed    = "auth_failed"
	ClassNotFound      = "not_found"
	ClassTimeout       = "timeout"
	ClassServerError   = "server_error"
	ClassNetworkError  = "network_error"
	ClassInvalidParams = "invalid_params"
	ClassToolError     = "tool_error"
)

// ErrorClasses lists the error classes, for the actions of the nodes that
// produce them.
func ErrorClasses() []string {
	return []string{ClassRateLimited, ClassAuthFailed, ClassNotFound, ClassTimeout, ClassServerError, ClassNetworkError, ClassInvalidParams, ClassToolError}
}

// ClassOfStatus is the error class of an HTTP status ("" when none fits).
func ClassOfStatus(code int) string {
	switch {
	case code == 429:
		return ClassRateLimited
	case code == 401 || code == 403:
		return ClassAuthFailed
	case code == 404 || code == 410:
		return ClassNotFound
	case code == 408 || code == 504:
		return ClassTimeout
	case code == 400 || code == 422:
		return ClassInvalidParams
	case code >= 500:
		return ClassServerError
	}
	return ""
}

// Ok returns a default-action result.
func Ok(outputs map[string]any) *Result { return &Result{Outputs: outputs} }

// Fail returns an error-action result with outputs["error"] = msg.
func Fail(msg string, outputs map[string]any) *Result {
	if outputs == nil {
		outputs = map[string]any{}
	}
	outputs["error"] = msg
	return &Result{Outputs: outputs, Action: "error"}
}

// Catalog looks node types up by name. The registry implements it.
type Catalog interface {
	// Lookup returns the spec for a node type.
	Lookup(nodeType string) (*Spec, bool)
	// Types lists every usable node type (for did-you-mean suggestions).
	Types() []string
}
