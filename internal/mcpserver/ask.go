package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/ask"
	"github.com/pflow-go/pflow/internal/pferr"
)

// elicitFrom is the first protocol version that forbids a server's own
// elicitation/create requests while it serves a call (input-required
// results instead).
const elicitUntil = "2026-07-28"

// clientAsker puts an ask step's question to the person behind the MCP
// client that called workflow_execute: elicitation/create through the
// call's session, with a form of the choice (and the step's schema).
type clientAsker struct {
	ss *mcp.ServerSession
}

// clientAskerFor is the Asker of a run a call starts: the calling client
// when it advertised elicitation on a protocol version that lets a server
// send it (before 2026-07-28); nil otherwise (an ask step then pauses the
// run, and the agent answers it with workflow_execute resume + answer).
func clientAskerFor(req *mcp.CallToolRequest) node.Asker {
	if req == nil || req.Session == nil {
		return nil
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ProtocolVersion >= elicitUntil {
		return nil
	}
	return &clientAsker{ss: req.Session}
}

// ElicitSchema is the form an ask step's question is elicited with: a
// required "choice" (an enum of the choices) and the step's own
// properties.
func ElicitSchema(q node.Question) map[string]any {
	props := map[string]any{}
	var required []any
	if len(q.Choices) > 0 {
		enum := make([]any, len(q.Choices))
		for i, c := range q.Choices {
			enum[i] = c
		}
		props["choice"] = map[string]any{"type": "string", "title": "Choice", "enum": enum}
		required = append(required, "choice")
	}
	if q.Schema != nil {
		sp, _ := q.Schema["properties"].(map[string]any)
		for k, v := range sp {
			props[k] = v
		}
		for _, r := range ask.Required(q.Schema) {
			required = append(required, r)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func (c *clientAsker) Ask(ctx context.Context, q node.Question) (node.Answer, error) {
	msg := q.Message
	if q.Who != "" {
		msg += fmt.Sprintf(" (to be answered by %s)", q.Who)
	}
	res, err := c.ss.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: ElicitSchema(q)})
	if err != nil {
		if ctx.Err() != nil {
			return node.Answer{}, ctx.Err()
		}
		// The client could not ask: the run waits for an answer instead.
		return node.Answer{}, fmt.Errorf("%w: the MCP client did not answer the elicitation: %v", node.ErrNoAsker, err)
	}
	return answerOf(q, res)
}

// answerOf reads a person's elicitation answer to q: accept gives the
// choice (and input), decline the choice deny when q has one; otherwise
// (dismissed) nobody decided and the run waits (node.ErrNoAsker).
func answerOf(q node.Question, res *mcp.ElicitResult) (node.Answer, error) {
	ans := node.Answer{Channel: ask.ChannelMCPClient}
	switch res.Action {
	case "accept":
		ans.Input = map[string]any{}
		for k, v := range res.Content {
			if k == "choice" && len(q.Choices) > 0 {
				ans.Choice, _ = v.(string)
				continue
			}
			ans.Input[k] = v
		}
		if ans.Choice == "" && len(q.Choices) == 1 {
			ans.Choice = q.Choices[0]
		}
		return ans, nil
	case "decline":
		if slices.Contains(q.Choices, "deny") {
			ans.Choice = "deny"
			return ans, nil
		}
	}
	return node.Answer{}, fmt.Errorf("%w: the person dismissed the question (%s)", node.ErrNoAsker, res.Action)
}

// askRequestID names the ask step's question in an input-required result.
const askRequestID = "ask"

// inputRequired is a tool result that asks the client for input (MCP
// 2026-07-28 multi round-trip, SEP-2322): the client fulfils its input
// requests and calls the tool again with the responses and the state.
type inputRequired struct {
	res *mcp.CallToolResult
}

// inputRequiredFor asks the client of a 2026-07-28 session that can elicit
// the question of the run out paused at (its state is the run id: the
// retried call continues that run with the answer); nil when out did not
// pause, was not recorded, or the client cannot be asked this way.
func inputRequiredFor(req *mcp.CallToolRequest, out *app.RunOutcome) *inputRequired {
	if out == nil || out.Result == nil || out.Result.Waiting == nil || out.RunID == "" || req == nil || req.Session == nil {
		return nil
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ProtocolVersion < elicitUntil {
		return nil
	}
	q := out.Result.Waiting.Question
	msg := out.Redactor.String(q.Message)
	if q.Who != "" {
		msg += fmt.Sprintf(" (to be answered by %s)", q.Who)
	}
	return &inputRequired{res: &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{askRequestID: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: ElicitSchema(q)}},
		RequestState:  out.RunID,
	}}
}

// answerInputRequired continues the run a retried call's state names with
// the client's response to its question.
func (s *Server) answerInputRequired(ctx context.Context, c *call) (any, error) {
	id := c.req.Params.RequestState
	q, err := c.app.WaitingQuestion(id)
	if err != nil {
		return nil, err
	}
	res, _ := c.req.Params.InputResponses[askRequestID].(*mcp.ElicitResult)
	if res == nil {
		return nil, pferr.Newf(pferr.Validation, "the retried call carries no answer to the question of run '%s' (input response %q)", id, askRequestID)
	}
	ans, err := answerOf(*q, res)
	if err != nil {
		// Nobody decided: the run keeps waiting.
		d, serr := s.recordStatus(c.app, id)
		if serr != nil {
			return nil, serr
		}
		return &RunResult{Outputs: map[string]any{}, Status: d.Status, Steps: []app.StepReport{}, RunID: id, Waiting: d.Waiting}, nil
	}
	req := app.AnswerRequest{Run: id, Choice: ans.Choice, Input: ans.Input, Channel: ask.ChannelMCPClient}
	req.Origin, req.Policy, req.Temporal = "mcp", s.policy(), c.srv.opts.Temporal
	out, t, err := c.app.AnswerRun(ctx, req)
	if err != nil {
		return nil, err
	}
	return c.answer(ctx, out, t), nil
}
