package runs

import (
	"path/filepath"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
)

// States of a run that paused at an ask step (status.json says waiting).
const (
	// StateWaiting is a run paused at an ask step, not answered yet.
	StateWaiting = "waiting"
	// StateAnswered is a waiting run that was answered: another run
	// (Answer.ContinuedBy) continued it.
	StateAnswered = "answered"
)

// answerFile holds the answer to a waiting run's question.
const answerFile = "answer.json"

// Answer is answer.json: how a waiting run's question was answered and
// which run continued it.
type Answer struct {
	QuestionID string         `json:"question_id"`
	Choice     string         `json:"choice"`
	Input      map[string]any `json:"input,omitempty"`
	Channel    string         `json:"channel"`
	AnsweredBy string         `json:"answered_by,omitempty"`
	AnsweredAt time.Time      `json:"answered_at"`
	// ContinuedBy is the run that continued this one with the answer.
	ContinuedBy string `json:"continued_by"`
}

// Answer reads a waiting run's answer.json; nil when it was not answered.
func (s *Store) Answer(id string) *Answer {
	var a Answer
	if readJSON(filepath.Join(s.dir(id), answerFile), &a) != nil {
		return nil
	}
	return &a
}

// SetAnswer records the answer to waiting run id's question (atomically).
func (s *Store) SetAnswer(id string, a *Answer) error {
	if !validID(id) {
		return pferr.Newf(pferr.Validation, "'%s' is not a run id", id)
	}
	data, err := encodeJSON(a)
	if err != nil {
		return err
	}
	return fsutil.ReplaceFile(filepath.Join(s.dir(id), answerFile), data, 0o600)
}
