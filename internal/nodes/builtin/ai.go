package builtin

import "github.com/pflow-go/pflow/internal/node"

// aiSpecs lists the llm and code nodes.
func aiSpecs(cfg Config) []*node.Spec {
	return nil
}
