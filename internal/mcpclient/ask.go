package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

// A server may ask a person for input in the middle of a tool call: with
// 2025 revisions it sends elicitation/create to the client while the call
// runs; with 2026-07-28 the call answers input_required, and go-sdk's
// client fulfils the request and calls again. Both reach Session.elicit,
// which puts the question to the Asker of the step that made the call (see
// docs/decisions.md, "Both protocol revisions").

// inflight is one tools/call in progress on a session.
type inflight struct {
	ctx    context.Context // the call's
	tool   string
	step   string
	asker  node.Asker
	pause  func() (resume func()) // holds the call's idle timeout while a person answers
	cancel context.CancelFunc

	mu  sync.Mutex
	err error // why pflow ended the call (a question nobody could answer)
}

func (c *inflight) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.cancel()
}

func (c *inflight) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

type inflightKey struct{}
type stepKey struct{}

// WithStep returns ctx naming the workflow step that makes the calls
// (it goes into the ID of a server's question).
func WithStep(ctx context.Context, step string) context.Context {
	return context.WithValue(ctx, stepKey{}, step)
}

func (s *Session) addCall(c *inflight) {
	s.callsMu.Lock()
	if s.calls == nil {
		s.calls = map[*inflight]struct{}{}
	}
	s.calls[c] = struct{}{}
	s.callsMu.Unlock()
}

func (s *Session) removeCall(c *inflight) {
	s.callsMu.Lock()
	delete(s.calls, c)
	s.callsMu.Unlock()
}

// askingCall finds the call a server's question belongs to: the one in
// ctx (a 2026-07-28 input_required result is fulfilled inside the call),
// or else the call in flight on the session (a 2025 elicitation/create
// arrives apart from the call). Several calls in flight belong together
// when they share one asker (the items of one batch step); otherwise the
// question cannot be placed and nil is returned, with every tool in flight.
func (s *Session) askingCall(ctx context.Context) (*inflight, []string) {
	if c, ok := ctx.Value(inflightKey{}).(*inflight); ok {
		return c, []string{c.tool}
	}
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	var first *inflight
	var tools []string
	same := true
	for c := range s.calls {
		if !containsString(tools, c.tool) {
			tools = append(tools, c.tool)
		}
		if first == nil {
			first = c
		} else if !sameAsker(first.asker, c.asker) {
			same = false
		}
	}
	if first == nil || !same {
		return nil, tools
	}
	return first, tools
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sameAsker compares two askers without panicking on incomparable types.
func sameAsker(a, b node.Asker) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// elicit answers a server's elicitation through the asker of the call.
func (s *Session) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c, tools := s.askingCall(ctx)
	toolText := strings.Join(tools, ", ")
	if c != nil {
		toolText = c.tool
	}
	message := strings.TrimSpace(p.Message)
	if p.Mode == "url" && p.URL != "" {
		message = strings.TrimSpace(message + "\nOpen " + p.URL)
	}
	if c == nil {
		// No call, or calls of different runs: nobody to ask for sure.
		return nil, fmt.Errorf("pflow cannot tell which of its calls (tools %s) asks %q", toolText, message)
	}
	q := node.Question{
		ID:      s.questionID(c),
		Message: message,
		Choices: []string{"accept", "decline"},
		Schema:  schemaMap(p.RequestedSchema),
		From:    fmt.Sprintf("server %s, tool %s", s.Server.Name, c.tool),
	}
	if c.asker == nil {
		err := s.unanswerable(c.tool, q, nil)
		c.fail(err)
		return nil, err
	}
	// The question lives as long as the call and the server's request.
	actx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel)
	resume := c.pause()
	ans, err := c.asker.Ask(actx, q)
	resume()
	stop()
	cancel()
	if err != nil {
		err = s.unanswerable(c.tool, q, err)
		c.fail(err)
		return nil, err
	}
	return elicitResult(ans), nil
}

// questionID is "<step>/<server>/<n>": the n-th question of the session.
func (s *Session) questionID(c *inflight) string {
	step := c.step
	if step == "" {
		step = c.tool
	}
	return fmt.Sprintf("%s/%s/%d", step, s.Server.Name, s.questions.Add(1))
}

// elicitResult maps a person's answer to the elicitation result.
func elicitResult(a node.Answer) *mcp.ElicitResult {
	switch strings.ToLower(strings.TrimSpace(a.Choice)) {
	case "decline", "deny", "no", "reject":
		return &mcp.ElicitResult{Action: "decline"}
	case "cancel", "":
		if a.Choice == "" && a.Input != nil {
			return &mcp.ElicitResult{Action: "accept", Content: plainJSON(a.Input)}
		}
		return &mcp.ElicitResult{Action: "cancel"}
	}
	content := plainJSON(a.Input)
	if content == nil {
		content = map[string]any{}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// plainJSON turns typed input (pflow's value model: int64, ...) into what
// encoding/json would decode, so the SDK's schema check sees plain JSON.
func plainJSON(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return in
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return in
	}
	return out
}

// unanswerable is the failure of a call whose server asked a question
// nobody in this run can answer (no asker, or the asker has no channel to
// a person); cause is the asker's error, nil when there is no asker.
func (s *Session) unanswerable(tool string, q node.Question, cause error) *pferr.Error {
	how := "Run the workflow from a terminal (pflow asks there), or through an MCP client that supports elicitation (pflow mcp serve passes the question on to it)."
	if cause != nil && !errors.Is(cause, node.ErrNoAsker) {
		e := s.fail(fmt.Sprintf("MCP server %s, tool %s, asked %q and the question could not be answered: %v", s.Server.Name, tool, q.Message, cause), tool, how)
		e.Err = cause
		return e
	}
	e := s.fail(fmt.Sprintf("MCP server %s, tool %s, asked a question and nobody can answer it in this run: %q", s.Server.Name, tool, q.Message), tool, how)
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details["question"] = q
	return e
}
