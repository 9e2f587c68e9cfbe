package runtime

import (
	"context"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// A node that returns node.WaitingError pauses the run: status waiting,
// the question kept, the step waiting (not failed), later steps not run,
// no error edge taken.
func TestWaitingPausesTheRun(t *testing.T) {
	ran := 0
	cat := fakeCatalog{
		"asks": {Type: "asks", Node: node.Func(func(ctx context.Context, req *node.Request) (*node.Result, error) {
			return nil, &node.WaitingError{Question: node.Question{ID: req.NodeID, Message: "Go?"}}
		})},
		"counts": {Type: "counts", Node: node.Func(func(ctx context.Context, req *node.Request) (*node.Result, error) {
			ran++
			return node.Ok(nil), nil
		})},
	}
	w := &workflow.Workflow{
		Nodes: []*workflow.Node{{ID: "gate", Type: "asks"}, {ID: "after", Type: "counts"}, {ID: "recover", Type: "counts"}},
		Edges: []workflow.Edge{{From: "gate", To: "after"}, {From: "gate", To: "recover", Action: "error"}},
	}
	res := Run(context.Background(), w, nil, Options{Catalog: cat})
	if res.Status != RunWaiting || res.Waiting == nil || res.Waiting.NodeID != "gate" || res.Waiting.Question.Message != "Go?" || res.Failure != nil {
		t.Fatalf("result %+v", res)
	}
	if ran != 0 {
		t.Fatalf("%d later steps ran", ran)
	}
	if s := res.Steps[0]; s.Status != StatusWaiting || s.Action != ActionWaiting || s.Error != "" {
		t.Fatalf("step %+v", s)
	}
}
