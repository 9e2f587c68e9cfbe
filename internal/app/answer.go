package app

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/ask"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// WaitingReport is what a run paused at an ask step asks, and how to
// answer it: a person runs Command, an agent calls Tool with Arguments.
type WaitingReport struct {
	Step     string         `json:"step"`
	Question node.Question  `json:"question"`
	Command  string         `json:"command,omitempty"`
	Tool     string         `json:"tool,omitempty"`
	Args     map[string]any `json:"arguments,omitempty"`
	Say      string         `json:"say"`
}

// waitingReport words how to answer a waiting run for aud.
func waitingReport(r *runtime.Result, runID string, aud Audience) *WaitingReport {
	wt := r.Waiting
	if wt == nil {
		return nil
	}
	w := &WaitingReport{Step: wt.NodeID, Question: wt.Question}
	choice := "<choice>"
	if len(wt.Question.Choices) > 0 {
		choice = wt.Question.Choices[0]
	}
	switch {
	case runID == "":
		w.Say = "The run waits for an answer but was not recorded, so it cannot be continued: run it again where a person can be asked."
	case aud == Agent:
		w.Tool = "workflow_execute"
		w.Args = map[string]any{"resume": runID, "answer": choice}
		if wt.Question.Schema != nil {
			w.Args["answer_input"] = map[string]any{}
		}
		w.Say = fmt.Sprintf("The run waits for a person's answer to step '%s'. Ask the user (choices: %s), then call workflow_execute with resume %q and answer set to their choice.",
			wt.NodeID, strings.Join(wt.Question.Choices, ", "), runID)
	default:
		w.Command = fmt.Sprintf("pflow runs answer %s %s", runID, choice)
		if wt.Question.Schema != nil {
			for _, p := range ask.Properties(wt.Question.Schema) {
				w.Command += " --input " + p + "=<" + ask.PropType(wt.Question.Schema, p) + ">"
			}
		}
		w.Say = fmt.Sprintf("The run waits for an answer to step '%s' (choices: %s): %s", wt.NodeID, strings.Join(wt.Question.Choices, ", "), w.Command)
	}
	return w
}

// AnswerRequest answers a waiting run's question and continues the run.
type AnswerRequest struct {
	// Run is the waiting run ("last" for the newest run).
	Run    string
	Choice string
	// Input is the typed input the question's schema asks for (text values
	// are read by the property's type).
	Input map[string]any
	// Channel is how the answer came (default "runs-answer").
	Channel string
	// Target, when set, is the workflow to continue the run with (it must
	// be the one the run ran); by default the run's saved workflow or file,
	// as it is now, or the inline workflow its record keeps.
	Target *Target
	// Run carries the rest: Observer, NoTrace, Origin, Policy, Asker (for
	// later questions of the same run), OnStart.
	RunRequest
}

// AnswerRun stores the answer to waiting run req.Run's question in its
// record and continues it: a resume whose ask step takes the answer
// (channel runs-answer), re-using every finished step. The outcome is the
// continuing run's; its target is returned for rendering.
func (a *App) AnswerRun(ctx context.Context, req AnswerRequest) (*RunOutcome, *Target, error) {
	a.settle()
	st := a.RunStore()
	id, err := st.Resolve(req.Run)
	if err != nil {
		return nil, nil, err
	}
	q, err := waitingQuestion(st, id)
	if err != nil {
		return nil, nil, err
	}
	channel := req.Channel
	if channel == "" {
		channel = ask.ChannelRunsAnswer
	}
	ans, err := ask.CheckAnswer(*q, node.Answer{Choice: req.Choice, Input: req.Input, Channel: channel})
	if err != nil {
		e := pferr.Newf(pferr.Validation, "cannot answer run '%s': %v", id, err).
			WithHint(fmt.Sprintf("The question (step '%s'): %s\nChoices: %s", q.ID, q.Message, strings.Join(q.Choices, ", ")))
		if q.Schema != nil {
			e = e.WithHint(fmt.Sprintf("The question (step '%s'): %s\nChoices: %s. Input (--input name=value): %s", q.ID, q.Message, strings.Join(q.Choices, ", "), strings.Join(ask.Properties(q.Schema), ", ")))
		}
		return nil, nil, e
	}
	t := req.Target
	if t == nil {
		if t, err = a.waitingTarget(id); err != nil {
			return nil, nil, err
		}
	}
	rr := req.RunRequest
	rr.Target, rr.Resume = t, id
	rr.Asker = &storedAsker{question: q.ID, answer: ans, next: req.Asker}
	onStart := rr.OnStart
	var setErr error
	rr.OnStart = func(runID string) {
		setErr = st.SetAnswer(id, &runs.Answer{QuestionID: q.ID, Choice: ans.Choice, Input: ans.Input, Channel: channel,
			AnsweredBy: answeredBy(channel), AnsweredAt: a.now(), ContinuedBy: runID})
		if onStart != nil {
			onStart(runID)
		}
	}
	out, err := a.Run(ctx, rr)
	if setErr != nil {
		fmt.Fprintf(a.Log, "Warning: could not record the answer in run %s: %v\n", id, setErr)
	}
	return out, t, err
}

func answeredBy(channel string) string {
	if channel == ask.ChannelRunsAnswer || channel == ask.ChannelTerminal {
		return ask.UserName()
	}
	return channel
}

// waitingQuestion is the question of waiting run id, or why it cannot be
// answered.
func waitingQuestion(st *runs.Store, id string) (*node.Question, error) {
	status := st.Status(id)
	state := st.State(id)
	if status == nil || status.Status != runs.StateWaiting || status.Question == nil {
		return nil, pferr.Newf(pferr.Validation, "run '%s' is not waiting for an answer: it is %s", id, state).
			WithHint("Only a run paused at an ask step (status waiting) takes an answer; 'pflow runs' lists them.")
	}
	if prev := st.Answer(id); prev != nil {
		return nil, pferr.Newf(pferr.Validation, "run '%s' was answered already (%s, through %s, at %s): run %s continued it",
			id, prev.Choice, prev.Channel, prev.AnsweredAt.Local().Format("2006-01-02 15:04:05"), prev.ContinuedBy).
			WithHint("Answer the run that continued it if it waits again: pflow runs show " + prev.ContinuedBy)
	}
	return status.Question, nil
}

// waitingTarget is the workflow to continue waiting run id with: its saved
// workflow or file as it is now, or the inline workflow its record keeps.
func (a *App) waitingTarget(id string) (*Target, error) {
	m, err := a.RunStore().Meta(id)
	if err != nil {
		return nil, err
	}
	if m.Workflow.Kind != runs.KindInline {
		return a.ResumeTarget(id)
	}
	ir, src := a.RunStore().Workflow(id)
	var w *workflow.Workflow
	switch {
	case len(src) > 0:
		w, err = workflow.ParseMarkdown(src, "")
	case len(ir) > 0:
		w, err = workflow.ParseJSON(ir, "")
	default:
		err = fmt.Errorf("its record keeps no workflow")
	}
	if err != nil {
		return nil, pferr.Newf(pferr.NotFound, "run '%s' ran an inline workflow that cannot be read from its record: %v", id, err)
	}
	return &Target{Workflow: w, Name: m.Workflow.Name}, nil
}

// storedAsker answers the question it holds the answer to, once; other
// questions go to next (nil: none can be asked, the run pauses again).
type storedAsker struct {
	question string
	answer   node.Answer
	next     node.Asker
	mu       sync.Mutex
	used     bool
}

func (s *storedAsker) Ask(ctx context.Context, q node.Question) (node.Answer, error) {
	s.mu.Lock()
	if !s.used && q.ID == s.question {
		s.used = true
		s.mu.Unlock()
		return s.answer, nil
	}
	s.mu.Unlock()
	if s.next == nil {
		return node.Answer{}, node.ErrNoAsker
	}
	return s.next.Ask(ctx, q)
}

// WaitingQuestion is the question of waiting run ref ("last" for the
// newest), or why it takes no answer.
func (a *App) WaitingQuestion(ref string) (*node.Question, error) {
	a.settle()
	st := a.RunStore()
	id, err := st.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return waitingQuestion(st, id)
}
