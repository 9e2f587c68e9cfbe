package builtin

import (
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/code"
	"github.com/pflow-go/pflow/internal/nodes/llm"
)

// aiSpecs lists the llm and code nodes.
func aiSpecs(cfg Config) []*node.Spec {
	return []*node.Spec{llm.Spec(cfg.LLMDefaultModel), code.Spec()}
}
