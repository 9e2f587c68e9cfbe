// Command pflow-temporal is pflow with its Temporal engine: every pflow
// command, plus runs on Temporal (pflow --temporal) and Temporal workers
// (pflow worker). pflow hands those commands to it, so users call pflow.
package main

import (
	"os"

	"github.com/pflow-go/pflow/internal/cli"
	"github.com/pflow-go/pflow/internal/durable"
)

func main() {
	os.Exit(cli.Run(durable.Engine{}))
}
