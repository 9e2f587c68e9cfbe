package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/runtime"
)

// backgroundRuns are the runs workflow_execute started with background:
// true, by run id, while the server runs: their progress, outcome and
// cancellation. Runs of earlier processes are read from their records.
type backgroundRuns struct {
	mu   sync.Mutex
	runs map[string]*bgRun
	seq  atomic.Int64
}

// bgRun is one background run.
type bgRun struct {
	id      string
	started time.Time
	total   int
	cancel  context.CancelFunc
	done    chan struct{}
	steps   atomic.Int64 // top-level steps finished
	current atomic.Value // string: the step running now

	// Set before done is closed.
	out *app.RunOutcome
	t   *app.Target
	err error
}

func (b *backgroundRuns) get(id string) *bgRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[id]
}

func (b *backgroundRuns) put(r *bgRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[string]*bgRun{}
	}
	b.runs[r.id] = r
}

// bgObserver counts a background run's finished top-level steps.
type bgObserver struct {
	r    *bgRun
	next runtime.Observer
}

func (o bgObserver) StepStarted(ev runtime.StepEvent) {
	if ev.Depth == 0 {
		o.r.current.Store(ev.NodeID)
	}
	if o.next != nil {
		o.next.StepStarted(ev)
	}
}

func (o bgObserver) StepFinished(ev runtime.StepEvent, s *runtime.Step) {
	if ev.Depth == 0 {
		o.r.steps.Add(1)
		o.r.current.Store("")
	}
	if o.next != nil {
		o.next.StepFinished(ev, s)
	}
}

func (o bgObserver) BatchProgress(ev runtime.StepEvent, done, total int) {
	if o.next != nil {
		o.next.BatchProgress(ev, done, total)
	}
}

// startBackground starts run (a.Run or a.AnswerRun with req) detached from
// the call: it returns once the run has started (its run id) or ended
// before starting (a validation failure: the usual result).
func (s *Server) startBackground(t *app.Target, req *app.RunRequest, run func(ctx context.Context) (*app.RunOutcome, *app.Target, error)) (any, error) {
	ctx, cancel := context.WithCancel(s.base)
	r := &bgRun{started: time.Now(), cancel: cancel, done: make(chan struct{})}
	if t != nil {
		r.total = len(t.Workflow.Nodes)
	}
	r.current.Store("")
	req.Observer = bgObserver{r: r}
	started := make(chan string, 1)
	onStart := req.OnStart
	req.OnStart = func(id string) {
		if id == "" {
			id = "unrecorded-" + strconv.FormatInt(s.bg.seq.Add(1), 10)
		}
		r.id = id
		s.bg.put(r)
		if onStart != nil {
			onStart(id)
		}
		started <- id
	}
	s.inflight.Add(1)
	go func() {
		defer s.inflight.Done()
		defer cancel()
		out, tt, err := run(ctx)
		r.out, r.t, r.err = out, tt, err
		if r.t == nil {
			r.t = t
		}
		close(r.done)
	}()
	select {
	case id := <-started:
		return &BackgroundStarted{Outputs: map[string]any{}, RunID: id, Status: runs.StateRunning, Background: true,
			Hint: "The run goes on after this answer: read its status, progress and outputs with run_status {\"run_id\": \"" + id + "\"} (or the resource pflow://runs/" + id + "); stop it with run_cancel."}, nil
	case <-r.done:
		if r.err != nil {
			return nil, r.err
		}
		rep := app.Report(r.out, r.t, app.Agent)
		return executeEnvelope(r.out, r.t, rep, nil), nil
	}
}

// BackgroundStarted is workflow_execute's answer for a background run.
type BackgroundStarted struct {
	// Outputs is empty: they are read later with run_status.
	Outputs    map[string]any `json:"outputs"`
	RunID      string         `json:"run_id"`
	Status     string         `json:"status"`
	Background bool           `json:"background"`
	Hint       string         `json:"hint"`
}

// RunStatus is run_status's and run_cancel's result.
type RunStatus struct {
	RunID string `json:"run_id"`
	// Status is running, success, degraded, failed, interrupted, waiting,
	// answered or died.
	Status     string `json:"status"`
	Background bool   `json:"background"`
	// Progress of a background run: top-level steps done of total, and the
	// step running now.
	Progress *RunProgress `json:"progress,omitempty"`
	// Outputs are a finished background run's declared outputs.
	Outputs map[string]any `json:"outputs,omitempty"`
	// Result is a finished background run's whole workflow_execute result.
	Result any `json:"result,omitempty"`
	// Waiting is what a waiting run asks and how to answer it.
	Waiting *app.WaitingReport `json:"waiting,omitempty"`
	// Answer is how a waiting run was answered (status answered).
	Answer     *runs.Answer `json:"answer,omitempty"`
	FailedStep string       `json:"failed_step,omitempty"`
	Error      string       `json:"error,omitempty"`
	Started    time.Time    `json:"started"`
	DurationMS float64      `json:"duration_ms,omitempty"`
	Hint       string       `json:"hint,omitempty"`
}

// RunProgress is a background run's progress.
type RunProgress struct {
	StepsDone   int    `json:"steps_done"`
	StepsTotal  int    `json:"steps_total"`
	CurrentStep string `json:"current_step,omitempty"`
}

func (s *Server) runTools() []*toolDef {
	runID := str("A run_id from workflow_execute (a background run's, or any recorded run's), or \"last\".")
	statusData := props("The run's state.", map[string]*jsonschema.Schema{
		"run_id":      str(""),
		"status":      str("running | success | degraded | failed | interrupted | waiting | answered | died"),
		"background":  {Type: "boolean"},
		"progress":    openObject("steps_done, steps_total, current_step (a background run of this server)."),
		"outputs":     openObject("The declared outputs of a finished background run."),
		"result":      openObject("The finished background run's whole workflow_execute result."),
		"waiting":     openObject("What a waiting run asks (question: message, choices, schema) and the workflow_execute call that answers it."),
		"answer":      openObject("How a waiting run was answered, and the run that continued it."),
		"failed_step": str(""), "error": str(""), "started": str(""), "duration_ms": number(""), "hint": str(""),
	}, "run_id", "status")
	return []*toolDef{
		{
			name:  "run_status",
			title: "Read a run's status",
			description: "The status, progress and outputs of a run: a background run started with workflow_execute " +
				"background: true (running, with steps done and the step running now; then its outputs or error), or any " +
				"recorded run. A run paused at an ask step has status waiting and its question (waiting.question); answer it " +
				"with workflow_execute {resume: <run_id>, answer: <choice>} after asking the user.",
			input:    object([]string{"run_id"}, map[string]*jsonschema.Schema{"run_id": runID}),
			data:     statusData,
			readOnly: true, idempotent: true,
			run: s.runStatus,
		},
		{
			name:  "run_cancel",
			title: "Cancel a background run",
			description: "Cancel a run that workflow_execute started with background: true and that is still running: its " +
				"steps stop, their processes are killed, the run ends interrupted (resumable with workflow_execute resume). " +
				"Returns the run's final status.",
			input:       object([]string{"run_id"}, map[string]*jsonschema.Schema{"run_id": str("The run_id workflow_execute answered with.")}),
			data:        statusData,
			destructive: true, idempotent: true,
			run: s.runCancel,
		},
	}
}

func (s *Server) runStatus(ctx context.Context, c *call) (any, error) {
	id := c.str("run_id")
	if r := s.bg.get(id); r != nil {
		return s.bgStatus(r), nil
	}
	return s.recordStatus(c.app, id)
}

func (s *Server) runCancel(ctx context.Context, c *call) (any, error) {
	id := c.str("run_id")
	r := s.bg.get(id)
	if r == nil {
		if _, err := s.recordStatus(c.app, id); err != nil {
			return nil, err
		}
		return nil, pferr.Newf(pferr.Validation, "run '%s' is not a background run of this server that is still running", id).
			WithHint("Only runs started with workflow_execute background: true can be cancelled, while they run; run_status shows a run's state.")
	}
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.bgStatus(r), nil
}

// bgStatus is the state of background run r.
func (s *Server) bgStatus(r *bgRun) *RunStatus {
	st := &RunStatus{RunID: r.id, Background: true, Started: r.started}
	select {
	case <-r.done:
	default:
		st.Status = runs.StateRunning
		cur, _ := r.current.Load().(string)
		st.Progress = &RunProgress{StepsDone: int(r.steps.Load()), StepsTotal: r.total, CurrentStep: cur}
		st.DurationMS = float64(time.Since(r.started).Microseconds()) / 1000
		return st
	}
	if r.err != nil {
		st.Status, st.Error = runtime.RunFailed, pferr.As(r.err).Message
		return st
	}
	rep := app.Report(r.out, r.t, app.Agent)
	st.Status = rep.Status
	if rep.Status == "" {
		st.Status = runtime.RunFailed
	}
	if r.out.Result != nil && r.out.Result.Interrupted {
		st.Status = "interrupted"
	}
	st.Progress = &RunProgress{StepsDone: int(r.steps.Load()), StepsTotal: r.total}
	if rep.DurationMS != nil {
		st.DurationMS = *rep.DurationMS
	}
	st.Outputs = rep.Result
	st.Waiting = rep.Waiting
	st.Result = executeEnvelope(r.out, r.t, rep, nil)
	if rep.Error != nil {
		st.Error = rep.Error.Message
	}
	return st
}

// recordStatus is the state of a recorded run, from its record.
func (s *Server) recordStatus(a *app.App, ref string) (*RunStatus, error) {
	d, err := a.ShowRun(ref)
	if err != nil {
		return nil, err
	}
	sum := d.Summary
	st := &RunStatus{RunID: sum.ID, Status: sum.Status, Started: sum.Started, DurationMS: sum.DurationMS,
		FailedStep: sum.FailedStep, Error: sum.Error, Answer: sum.Answer}
	if q := sum.Question; q != nil && sum.Answer == nil {
		st.Waiting = &app.WaitingReport{Step: d.Status.WaitingStep, Question: *q, Tool: "workflow_execute",
			Args: map[string]any{"resume": sum.ID, "answer": firstChoice(q.Choices)},
			Say:  fmt.Sprintf("The run waits for a person's answer to step '%s'. Ask the user, then call workflow_execute with resume %q and answer set to their choice.", q.ID, sum.ID)}
	}
	if st.Status == runtime.RunSuccess || st.Status == runtime.RunDegraded {
		st.Hint = "Its outputs were in the result of the call that ran it; every step's outputs are in the resource pflow://runs/" + sum.ID + "."
	}
	return st, nil
}

func firstChoice(c []string) string {
	if len(c) == 0 {
		return "<choice>"
	}
	return c[0]
}
