package builtin

import "github.com/pflow-go/pflow/internal/node"

// coreSpecs lists shell, http, file and test nodes.
func coreSpecs(cfg Config) []*node.Spec {
	return nil
}
