package runtime

import (
	"errors"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// A run that waits for a person: an ask step that could reach nobody
// returned node.WaitingError, so the run stops there, neither failed nor
// finished, and its record keeps the question until `pflow runs answer`
// continues it (see docs/decisions.md, "Steps that ask a person").
const (
	// RunWaiting is the status of a run paused at an ask step.
	RunWaiting = "waiting"
	// StatusWaiting is the status of the step it paused at.
	StatusWaiting = "waiting"
	// ActionWaiting is that step's action (no edge takes it).
	ActionWaiting = "waiting"
	// CategoryWaiting marks the Failure that carries a pause from the step
	// to the walk; the Result then has Waiting set and no Failure.
	CategoryWaiting = "waiting"
)

// Waiting is where a waiting run stopped and what it asks.
type Waiting struct {
	// NodeID is the step that asks (in a nested workflow: the nested
	// workflow's step in this workflow).
	NodeID   string        `json:"node_id"`
	Question node.Question `json:"question"`
}

// questionKey holds the question in a waiting Failure's Details.
const questionKey = "question"

// waitingFailure returns the pause err means (a node.WaitingError), or nil.
func waitingFailure(n *workflow.Node, err error) *Failure {
	var we *node.WaitingError
	if !errors.As(err, &we) {
		return nil
	}
	return &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryWaiting,
		Message: we.Error(), Details: map[string]any{questionKey: we.Question}}
}

// isWaiting reports whether fail is a pause, not a failure.
func isWaiting(fail *Failure) bool { return fail != nil && fail.Category == CategoryWaiting }

// markWaiting gives a step that paused its own status and action.
func markWaiting(step *Step, fail *Failure) {
	if isWaiting(fail) {
		step.Status, step.Action, step.Error = StatusWaiting, ActionWaiting, ""
	}
}

// pause ends the walk of f at step cur, which waits for an answer.
func (e *executor) pause(f *frame, cur *workflow.Node, fail *Failure) {
	q, _ := fail.Details[questionKey].(node.Question)
	f.res.Status = RunWaiting
	f.res.Waiting = &Waiting{NodeID: cur.ID, Question: q}
}

// childWaiting is the pause of a nested workflow step whose child run
// waits, or nil.
func childWaiting(n *workflow.Node, cres *Result) *Failure {
	if cres.Status != RunWaiting || cres.Waiting == nil {
		return nil
	}
	return waitingFailure(n, &node.WaitingError{Question: cres.Waiting.Question})
}
