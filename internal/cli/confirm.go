package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
)

// confirm asks before a destructive command (what it will do is prompt).
// With --yes it goes ahead; on a terminal it asks y/N; without a terminal
// (a script, an agent) it refuses, so nothing is destroyed by an answer no
// one gave. command is the command line to repeat with --yes.
func confirm(f *Factory, yes bool, prompt, command string) error {
	if yes {
		return nil
	}
	if !f.IO.InTTY {
		return &pferr.Error{Kind: pferr.Usage,
			Message: prompt + " — this needs confirmation, and there is no terminal to ask on",
			Hint:    "Run it again with --yes: " + command + " --yes"}
	}
	fmt.Fprintf(f.IO.ErrOut, "%s [y/N]: ", prompt)
	line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
		return nil
	}
	fmt.Fprintln(f.IO.ErrOut, "Cancelled.")
	return silentExit(pferr.ExitFailure)
}
