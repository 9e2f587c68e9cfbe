package nested

import (
	"context"
	"slices"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

// TestSpecDescribesTheNestedStep: `type: workflow` is described like every
// node (registry describe, discovery, the agent guide read it), and its
// Run refuses to run outside the engine.
func TestSpecDescribesTheNestedStep(t *testing.T) {
	s := Spec()
	if s.Type != "workflow" || s.Interface.Description == "" || len(s.Interface.Outputs) == 0 {
		t.Fatalf("incomplete spec: %+v", s)
	}
	for _, want := range []string{"workflow_ref", "workflow_name", "workflow_ir", "param_mapping", "output_mapping", "max_depth"} {
		if !slices.Contains(node.NestedParamNames(), want) {
			t.Errorf("param %s missing", want)
		}
	}
	for _, f := range s.Interface.Params {
		if f.Type == "" || f.Description == "" {
			t.Errorf("param %+v not fully declared", f)
		}
	}
	if _, err := s.Node.Run(context.Background(), &node.Request{}); err == nil {
		t.Error("the spec's node ran a nested workflow on its own")
	}
}
