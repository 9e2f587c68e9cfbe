package builtin

import (
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/ask"
	"github.com/pflow-go/pflow/internal/nodes/echo"
	"github.com/pflow-go/pflow/internal/nodes/file"
	httpnode "github.com/pflow-go/pflow/internal/nodes/http"
	"github.com/pflow-go/pflow/internal/nodes/nested"
	"github.com/pflow-go/pflow/internal/nodes/shell"
	"github.com/pflow-go/pflow/internal/nodes/switchnode"
)

// coreSpecs lists shell, http, file, nested-workflow, switch, ask and test nodes.
func coreSpecs(cfg Config) []*node.Spec {
	specs := []*node.Spec{shell.Spec(), httpnode.Spec()}
	specs = append(specs, file.Specs()...)
	specs = append(specs, echo.Spec(), nested.Spec(), switchnode.Spec(), ask.Spec())
	return specs
}
