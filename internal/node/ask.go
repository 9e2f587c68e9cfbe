package node

import (
	"context"
	"errors"
	"time"
)

// Question is what a step or an MCP server asks a person mid-run: the ask
// node's prompt, or a server's elicitation / input-required request. It is
// passed up whatever channel the run has (a terminal, the MCP client that
// started the run, or a durable pause answered later with `pflow runs
// answer`).
type Question struct {
	// ID names the question within the run: the step id for an ask step,
	// "<step>/<server>/<request>" for a server's question.
	ID string `json:"id"`
	// Message is the prompt shown to the person, with the values it is
	// about to act on already filled in.
	Message string `json:"message"`
	// Choices are the actions the person may pick (["approve", "deny"], or
	// one of several drafts). Empty when only Schema input is asked for.
	Choices []string `json:"choices,omitempty"`
	// Schema describes typed input as a flat JSON schema object
	// ({"type": "object", "properties": {...}, "required": [...]}); nil
	// when only a choice is asked for.
	Schema map[string]any `json:"schema,omitempty"`
	// From says who asks: "step gate", or "server github, tool create_issue".
	From string `json:"from,omitempty"`
	// Who, when set, names the person or role that may answer.
	Who string `json:"who,omitempty"`
}

// Answer is a person's reply to a Question.
type Answer struct {
	// Choice is the picked choice; for a server's elicitation "accept",
	// "decline" or "cancel".
	Choice string `json:"choice"`
	// Input holds typed input that fits Question.Schema.
	Input map[string]any `json:"input,omitempty"`
	// Channel says how the answer came: "terminal", "mcp-client",
	// "runs-answer", "temporal-signal", "timeout".
	Channel string `json:"channel"`
	// At is when the answer came, when the channel knows it better than
	// the clock of the process that runs the step (a Temporal workflow's
	// own time, the same on every replay). Zero: now.
	At time.Time `json:"at,omitzero"`
}

// Asker puts a Question to a person through the run's channel. It returns
// ErrNoAsker (wrapped) when the run has no channel that can reach a person
// now; the caller then pauses the run (an ask step) or fails naming the
// question (an MCP tool that asks).
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// ErrNoAsker means no person can be asked in this run right now.
var ErrNoAsker = errors.New("no channel to ask a person")

type askerKey struct{}

// WithAsker returns ctx carrying a. Nodes that ask (the ask node, an MCP
// call whose server elicits) find it with AskerFrom.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerFrom returns the run's Asker, or nil when the run has none.
func AskerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}
