// Command fakemcpd is the fake MCP server of internal/testutil/fakemcp as a
// binary of its own, built without the race detector.
package main

import (
	"fmt"
	"os"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

func main() {
	fakemcp.MaybeRun()
	fmt.Fprintln(os.Stderr, "fakemcpd: set "+fakemcp.EnvVar+" to the server's modes")
	os.Exit(2)
}
