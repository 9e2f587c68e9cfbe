// Command pflow runs .pflow.md workflows and manages their library, node
// registry, settings and MCP servers. Runs on Temporal (--temporal, pflow
// worker) are handed to pflow-temporal, which links the Temporal SDK that
// pflow leaves out to start fast.
package main

import (
	"os"

	"github.com/pflow-go/pflow/internal/cli"
	"github.com/pflow-go/pflow/internal/gctune"
)

func main() {
	gctune.Startup(os.Getenv)
	os.Exit(cli.Run(nil))
}
