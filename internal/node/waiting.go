package node

import "fmt"

// WaitingError is what a node that asks a person (the ask node) returns
// when the run has no channel that reaches one now (AskerFrom gave none, or
// its Ask returned ErrNoAsker): the runtime then pauses the run, with status
// "waiting", instead of failing it. The run record keeps Question, and
// `pflow runs answer` (or workflow_execute with resume and answer) continues
// the run with the answer.
type WaitingError struct {
	Question Question
}

func (e *WaitingError) Error() string {
	return fmt.Sprintf("waiting for an answer to '%s': no person can be asked in this run now", e.Question.ID)
}
