package durable

import (
	"context"
	"testing"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/node"
)

// oneNode is a catalog of one node type.
type oneNode struct{ spec *node.Spec }

func (c oneNode) Lookup(t string) (*node.Spec, bool) { return c.spec, t == c.spec.Type }
func (c oneNode) Types() []string                    { return []string{c.spec.Type} }

// TestWorkerPassesRouted: the worker hands its node the engine's
// Request.Routed (the fact workflow.RoutedSteps decides), so a routed
// failure's message is the same on Temporal as locally.
func TestWorkerPassesRouted(t *testing.T) {
	var got []bool
	spec := &node.Spec{Type: "probe", Node: node.Func(func(_ context.Context, req *node.Request) (*node.Result, error) {
		got = append(got, req.Routed)
		return node.Ok(nil), nil
	})}
	wk := &Worker{catalog: oneNode{spec}}
	for _, routed := range []bool{true, false} {
		if _, err := wk.RunNode(context.Background(), wire.NodeInput{NodeID: "a", Type: "probe", Routed: routed}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || !got[0] || got[1] {
		t.Errorf("the node saw Routed %v, want [true false]", got)
	}
}
