package durable

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
)

// memoQuestion holds a waiting run's question (JSON of node.Question), for
// pflow runs --temporal.
const memoQuestion = "pflow_question"

// signalAsker asks through the run's Temporal workflow: the run waits,
// durably, for the SignalAnswer signal that `pflow --temporal … runs answer`
// sends (see docs/decisions.md, "Steps that ask a person"). While it waits
// its memo says waiting and holds the question. A step's timeout is a
// durable timer.
type signalAsker struct{}

func (signalAsker) Ask(ctx context.Context, q node.Question) (node.Answer, error) {
	v, ok := workflowContext(ctx)
	if !ok {
		return node.Answer{}, node.ErrNoAsker
	}
	wctx := v.wctx
	qb, _ := json.Marshal(q)
	_ = workflow.UpsertMemo(wctx, map[string]any{memoStatus: runtime.RunWaiting, memoQuestion: string(qb)})
	defer func() { _ = workflow.UpsertMemo(wctx, map[string]any{memoStatus: "running", memoQuestion: ""}) }()

	var (
		ans      wire.Answer
		answered bool
		timedOut bool
	)
	sel := workflow.NewSelector(wctx)
	sel.AddReceive(workflow.GetSignalChannel(wctx, wire.SignalAnswer), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(wctx, &ans)
		answered = true
	})
	tctx, cancelTimer := workflow.WithCancel(wctx)
	defer cancelTimer()
	if deadline, ok := ctx.Deadline(); ok {
		sel.AddFuture(workflow.NewTimer(tctx, deadline.Sub(workflow.Now(wctx))), func(workflow.Future) { timedOut = true })
	}
	// A cancelled run (Ctrl-C on the submitter, run_cancel) ends the wait.
	sel.AddReceive(wctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(wctx)
	switch {
	case answered:
		return node.Answer{Choice: ans.Choice, Input: ans.Input, Channel: "temporal-signal", At: workflow.Now(wctx)}, nil
	case timedOut:
		return node.Answer{}, context.DeadlineExceeded
	}
	return node.Answer{}, fmt.Errorf("the run was cancelled while it waited for an answer")
}
