// Package builtin lists pflow's built-in node types. Registration is explicit
// (no init side effects) so tests can build small catalogs.
package builtin

import "github.com/pflow-go/pflow/internal/node"

// Config carries what built-in nodes need from settings.
type Config struct {
	// LLMDefaultModel is settings.llm.default_model ("" when unset).
	LLMDefaultModel string
}

// Specs returns every built-in node type.
func Specs(cfg Config) []*node.Spec {
	var specs []*node.Spec
	specs = append(specs, coreSpecs(cfg)...)
	specs = append(specs, aiSpecs(cfg)...)
	return specs
}
