// Command loopwriterd is the kill-mid-write tests' writer
// (internal/reliability/loopwriter) as a command of its own, built without
// the race detector by internal/testutil/pflowbin: loopwriterd KIND.
package main

import (
	"fmt"
	"os"

	"github.com/pflow-go/pflow/internal/reliability/loopwriter"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: loopwriterd settings|mcp-servers|registry|workflow")
		os.Exit(2)
	}
	os.Exit(loopwriter.Run(os.Args[1]))
}
