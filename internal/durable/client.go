package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pflow-go/pflow/internal/node"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/runtime"
)

func dial(ctx context.Context, c wire.Conn) (client.Client, error) {
	if c.Key == nil {
		return nil, errors.New("durable: no payload key")
	}
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	dc := dataConverter(c.Key)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cl, err := client.DialContext(dctx, client.Options{
		HostPort:          c.HostPort,
		Namespace:         c.NS(),
		DataConverter:     dc,
		FailureConverter:  failureConverter(dc),
		ConnectionOptions: client.ConnectionOptions{TLS: c.TLS},
		Logger:            tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	})
	if err != nil {
		hint := "Check --temporal host:port and --namespace; for a local server run: temporal server start-dev"
		if tlsTrouble(err.Error(), c.TLS != nil) {
			switch {
			case c.TLS == nil:
				hint = "If the service uses TLS, set " + wire.TLSEnv + "=1, or " + wire.TLSCAEnv + " to the CA that signed its certificate (and " +
					wire.TLSCertEnv + "/" + wire.TLSKeyEnv + " for a client certificate); see docs/scale-out.md"
			case len(c.TLS.Certificates) == 0:
				hint = "The TLS connection failed: if the service asks for a client certificate (mTLS), set " + wire.TLSCertEnv + " and " + wire.TLSKeyEnv +
					"; check that " + wire.TLSCAEnv + " signed the server's certificate"
			default:
				hint = "The TLS connection failed: check that " + wire.TLSCAEnv + " signed the server's certificate and that the service trusts " + wire.TLSCertEnv
			}
		}
		return nil, &wire.Error{Message: fmt.Sprintf("cannot reach Temporal at %s (namespace '%s'): %s", c.HostPort, c.NS(), innermost(err)), Hint: hint, Err: err}
	}
	return cl, nil
}

// tlsTrouble tells a dial failure that points at TLS (a handshake, a
// certificate, or a TLS server met in plain text: no HTTP/2 preface, a
// reset connection; over TLS also a connection the server broke off, as it
// does when it wants a client certificate) from an unreachable server.
func tlsTrouble(msg string, tlsOn bool) bool {
	signs := []string{"tls", "certificate", "handshake", "server preface", "connection reset"}
	if tlsOn {
		signs = append(signs, "broken pipe", "EOF")
	}
	for _, s := range signs {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func innermost(err error) string {
	msg := err.Error()
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		msg = u.Error()
	}
	return msg
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Engine is the Temporal engine (wire.Engine).
type Engine struct{}

var _ wire.Engine = Engine{}

// Submit starts the run and, unless Detach, follows it to its end. When ctx
// ends first (Ctrl-C) the run is cancelled on Temporal, its running steps
// stopped on their workers, and the interrupted outcome returned.
func (Engine) Submit(ctx context.Context, s wire.Submission) (*wire.Outcome, error) {
	c, err := dial(ctx, s.Conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := unsafeID.ReplaceAllString(strings.TrimSuffix(s.Input.Name, ".pflow.md"), "-")
	if name == "" {
		name = "workflow"
	}
	id := fmt.Sprintf("pflow-%s-%s", strings.Trim(name, "-."), hex.EncodeToString(suffix))
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.Conn.Queue(),
		Memo: map[string]any{memoWorkflow: s.Input.Name}}, wire.WorkflowName, s.Input)
	if err != nil {
		return nil, &wire.Error{Message: fmt.Sprintf("Temporal refused the run: %s", innermost(err)), Err: err,
			Hint: "Check --namespace and that the server accepts new workflows"}
	}
	out := &wire.Outcome{ID: id}
	// A run nobody picks up waits silently: say so when no worker polls.
	if d, err := c.DescribeTaskQueue(ctx, s.Conn.Queue(), enumspb.TASK_QUEUE_TYPE_WORKFLOW); err == nil && len(d.GetPollers()) == 0 && s.Conn.Log != nil {
		fmt.Fprintf(s.Conn.Log, "Warning: no pflow worker is polling task queue '%s' on %s: run %s waits until one starts (pflow worker --temporal %s --task-queue %s)\n",
			s.Conn.Queue(), s.Conn.HostPort, id, s.Conn.HostPort, s.Conn.Queue())
	}
	if s.Detach {
		return out, nil
	}
	out.Report, err = follow(ctx, c, s, id, run)
	return out, err
}

// follow streams progress until the run ends.
func follow(ctx context.Context, c client.Client, s wire.Submission, id string, run client.WorkflowRun) (*wire.Report, error) {
	type result struct {
		r   *wire.Report
		err error
	}
	done := make(chan result, 1)
	// The result is awaited without the caller's context: a Ctrl-C cancels
	// the run, and its (interrupted) outcome still arrives.
	go func() {
		var r wire.Report
		err := run.Get(context.WithoutCancel(ctx), &r)
		done <- result{&r, err}
	}()
	poll := s.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	seen := 0
	cancelled := false
	replay := func() {
		if s.Observer == nil {
			return
		}
		v, err := c.QueryWorkflow(context.WithoutCancel(ctx), id, "", wire.QueryProgress, seen)
		if err != nil {
			return // not started yet, or already closed
		}
		var evs []wire.Event
		if v.Get(&evs) != nil {
			return
		}
		seen += len(evs)
		for _, e := range evs {
			ev := runtime.StepEvent{Depth: e.Depth, NodeID: e.NodeID, Type: e.Type}
			switch e.Kind {
			case "started":
				s.Observer.StepStarted(ev)
			case "finished":
				s.Observer.StepFinished(ev, &runtime.Step{NodeID: e.NodeID, Type: e.Type, Status: e.Status, Action: e.Action, Error: e.Error, Source: e.Source, Duration: e.Duration})
			case "batch":
				s.Observer.BatchProgress(ev, e.Done, e.Total)
			}
		}
	}
	ctxDone := ctx.Done()
	for {
		select {
		case r := <-done:
			if r.err != nil {
				var canceled *temporal.CanceledError
				if errors.As(r.err, &canceled) {
					return interruptedReport(), nil
				}
				msg := innermost(r.err)
				if msg == "Encoded failure" {
					// The failure is sealed with a key this process does not
					// hold: the worker's key differs from ours.
					return nil, &wire.Error{Message: fmt.Sprintf("Temporal run %s failed on a worker whose payload key differs from this machine's: neither can read what the other sealed", id), Err: r.err,
						Hint: fmt.Sprintf("Give every worker and submitter the same %s (or the same $PFLOW_HOME/temporal.key), restart the workers, and run the workflow again", wire.KeyEnv)}
				}
				return nil, &wire.Error{Message: fmt.Sprintf("Temporal run %s failed: %s", id, msg), Err: r.err,
					Hint: fmt.Sprintf("See its history: temporal workflow show --workflow-id %s", id)}
			}
			replay()
			return r.r, nil
		case <-ctxDone:
			ctxDone = nil
			if !cancelled {
				cancelled = true
				_ = c.CancelWorkflow(context.WithoutCancel(ctx), id, "")
			}
		case <-t.C:
			replay()
		}
	}
}

func interruptedReport() *wire.Report {
	return &wire.Report{Status: runtime.RunFailed, Interrupted: true, Failure: &wire.FailureReport{Category: runtime.CategoryInterrupted,
		Message: "Workflow interrupted: the run was cancelled on Temporal; the running steps were stopped on their workers."}}
}

// List returns the newest pflow runs of the namespace.
func (Engine) List(ctx context.Context, conn wire.Conn, limit int) ([]wire.RunInfo, error) {
	c, err := dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	dc := dataConverter(conn.Key)
	var out []wire.RunInfo
	var token []byte
	for len(out) < limit {
		resp, err := c.ListWorkflow(ctx, listRequest(conn.NS(), token))
		if err != nil {
			var unimpl *serviceerror.Unimplemented
			if errors.As(err, &unimpl) {
				return nil, &wire.Error{Message: "this Temporal server cannot list workflows", Err: err}
			}
			return nil, &wire.Error{Message: fmt.Sprintf("cannot list runs on Temporal at %s: %s", conn.HostPort, innermost(err)), Err: err}
		}
		for _, e := range resp.Executions {
			ri := wire.RunInfo{ID: e.GetExecution().GetWorkflowId(), Status: statusName(e.GetStatus())}
			// pflow's status and the workflow's name are in the (sealed) memo.
			fields := e.GetMemo().GetFields()
			memo := func(k string) string {
				var v string
				if p, ok := fields[k]; ok {
					_ = dc.FromPayload(p, &v)
				}
				return v
			}
			if st := memo(memoStatus); st != "" && ri.Status == "completed" || st == runtime.RunWaiting && ri.Status == "running" {
				ri.Status = st
			}
			if q := memo(memoQuestion); q != "" && ri.Status == runtime.RunWaiting {
				var question node.Question
				if json.Unmarshal([]byte(q), &question) == nil {
					ri.Question = &question
				}
			}
			ri.Workflow, ri.FailedStep = memo(memoWorkflow), memo(memoFailedStep)
			if t := e.GetStartTime(); t != nil {
				ri.Started = t.AsTime()
			}
			if t := e.GetCloseTime(); t != nil {
				ri.Closed = t.AsTime()
			}
			out = append(out, ri)
			if len(out) == limit {
				break
			}
		}
		token = resp.NextPageToken
		if len(token) == 0 {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) }) // newest first
	return out, nil
}

// Answer sends a person's answer to a run waiting at an ask step.
func (Engine) Answer(ctx context.Context, conn wire.Conn, id string, a wire.Answer) error {
	c, err := dial(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SignalWorkflow(ctx, id, "", wire.SignalAnswer, a); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return &wire.Error{Message: fmt.Sprintf("no running Temporal run %s at %s: it has finished, or the id is wrong (pflow runs --temporal %s lists them)", id, conn.HostPort, conn.HostPort), Err: err}
		}
		return &wire.Error{Message: fmt.Sprintf("cannot answer run %s on Temporal at %s: %s", id, conn.HostPort, innermost(err)), Err: err}
	}
	return nil
}

func statusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running"
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed_out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued"
	}
	return "unknown"
}

func listRequest(ns string, token []byte) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Namespace: ns, PageSize: 100, NextPageToken: token,
		Query: fmt.Sprintf("WorkflowType = '%s'", wire.WorkflowName)}
}

// Prior reads a finished run back for a resume: the input it was started
// with and its report (with its completed node executions).
func (e Engine) Prior(ctx context.Context, conn wire.Conn, id string) (*wire.PriorRun, error) {
	if id == "last" {
		list, err := e.List(ctx, conn, 1)
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, &wire.Error{Message: fmt.Sprintf("there is no pflow run on Temporal at %s to resume", conn.HostPort),
				Hint: "List them with: pflow runs --temporal " + conn.HostPort}
		}
		id = list[0].ID
	}
	c, err := dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	d, err := c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, &wire.Error{Message: fmt.Sprintf("there is no run '%s' on Temporal at %s (namespace '%s')", id, conn.HostPort, conn.NS()), Err: err,
				Hint: "List the runs with: pflow runs --temporal " + conn.HostPort}
		}
		return nil, &wire.Error{Message: fmt.Sprintf("cannot read run '%s' on Temporal: %s", id, innermost(err)), Err: err}
	}
	desc := d.RawResponse
	if desc.GetWorkflowExecutionInfo().GetType().GetName() != wire.WorkflowName {
		return nil, &wire.Error{Message: fmt.Sprintf("Temporal run '%s' is not a pflow run", id)}
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, &wire.Error{Message: fmt.Sprintf("Temporal run '%s' is still running: only a finished run can be resumed", id),
			Hint: "Wait for it, or cancel it: temporal workflow cancel --workflow-id " + id}
	}
	dc := dataConverter(conn.Key)
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, &wire.Error{Message: fmt.Sprintf("Temporal run '%s' has no history", id)}
	}
	first, err := it.Next()
	if err != nil {
		return nil, &wire.Error{Message: fmt.Sprintf("cannot read the history of run '%s': %s", id, innermost(err)), Err: err}
	}
	prior := &wire.PriorRun{ID: id}
	if err := dc.FromPayloads(first.GetWorkflowExecutionStartedEventAttributes().GetInput(), &prior.Input); err != nil {
		return nil, &wire.Error{Message: fmt.Sprintf("cannot open the input of run '%s': %s", id, innermost(err)), Err: err}
	}
	var rep wire.Report
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &rep); err == nil {
		prior.Report = &rep
	}
	return prior, nil
}
