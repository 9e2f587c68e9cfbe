package wire

import (
	"context"
	"crypto/tls"
	"io"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
)

// Engine runs workflows on Temporal. The pflow-temporal binary provides it
// (internal/durable); in pflow it is nil and Temporal commands are handed
// over to that binary.
type Engine interface {
	// Submit starts a run and, unless Detach, follows it to its end.
	Submit(ctx context.Context, s Submission) (*Outcome, error)
	// Serve runs a worker until ctx ends.
	Serve(ctx context.Context, cfg WorkerConfig) error
	// List returns the newest pflow runs of the namespace.
	List(ctx context.Context, conn Conn, limit int) ([]RunInfo, error)
	// Prior reads a finished run back (its input and report) for a resume;
	// id "last" is the newest pflow run.
	Prior(ctx context.Context, conn Conn, id string) (*PriorRun, error)
	// Answer sends a person's answer to a run waiting at an ask step.
	Answer(ctx context.Context, conn Conn, id string, a Answer) error
}

// Conn says which Temporal service, namespace and task queue to use.
type Conn struct {
	HostPort  string
	Namespace string
	TaskQueue string
	// Key seals every payload.
	Key *Key
	// TLS, when set, secures the connection (a cluster or Temporal Cloud
	// with mTLS); nil connects in plain text (a local dev server).
	TLS *tls.Config
	// Log receives the Temporal SDK's warnings and errors (nil: discarded).
	Log io.Writer
}

// Queue is the task queue, defaulted.
func (c Conn) Queue() string {
	if c.TaskQueue == "" {
		return DefaultTaskQueue
	}
	return c.TaskQueue
}

// NS is the namespace, defaulted.
func (c Conn) NS() string {
	if c.Namespace == "" {
		return DefaultNamespace
	}
	return c.Namespace
}

// Submission is a run to start on Temporal.
type Submission struct {
	Conn   Conn
	Input  RunInput
	Detach bool
	// Observer receives the run's progress (may be nil).
	Observer runtime.Observer
	// Poll is how often progress is asked for (default 250 ms).
	Poll time.Duration
}

// Outcome is a Temporal run's result.
type Outcome struct {
	// ID is the Temporal workflow ID of the run.
	ID     string
	Report *Report
}

// WorkerConfig configures a worker.
type WorkerConfig struct {
	Conn Conn
	// Catalog is the worker's node catalog (its registry, its MCP servers).
	Catalog node.Catalog
	// Env is where the worker looks up inputs and node configuration.
	Env runtime.EnvLookup
	// Log receives the nodes' diagnostics.
	Log io.Writer
	// Scope holds resources shared by every node execution on this worker
	// (MCP sessions); the caller closes it.
	Scope node.Scope
	// OnParams, when set, sees every node execution's params.
	OnParams func(map[string]any)
	// Redact, when set, masks the worker's known secrets (node.Request.Redact).
	Redact func(string) string
	// MaxConcurrent bounds the node executions this worker runs at once
	// (0: Temporal's default).
	MaxConcurrent int
	// Ready is called once the worker polls its task queue.
	Ready func()
}

// RunInfo is one Temporal run, as listed.
type RunInfo struct {
	ID string `json:"id"`
	// Status is pflow's status of a finished run (success, degraded,
	// failed, interrupted) or of one waiting at an ask step (waiting), else
	// Temporal's (running, cancelled, terminated, timed_out, failed).
	Status     string    `json:"status"`
	Workflow   string    `json:"workflow,omitempty"`
	FailedStep string    `json:"failed_step,omitempty"`
	Started    time.Time `json:"started"`
	Closed     time.Time `json:"closed,omitzero"`
	// Question is what a waiting run asks.
	Question *node.Question `json:"question,omitempty"`
}

// Error is a failure to reach or use Temporal, worded for the user.
type Error struct {
	Message string
	Hint    string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }
