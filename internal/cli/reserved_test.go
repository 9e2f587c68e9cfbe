package cli

import (
	"slices"
	"testing"

	"github.com/pflow-go/pflow/internal/library"
)

// Every command name (and alias) is a reserved workflow name: a saved
// workflow called like a command could never be run as `pflow <name>`.
func TestCommandNamesAreReservedWorkflowNames(t *testing.T) {
	root := NewRootCmd(&Factory{IO: &IOStreams{}})
	for _, c := range root.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			if !slices.Contains(library.Reserved, name) {
				t.Errorf("command %q is not in library.Reserved: a workflow saved under that name could not be run by name", name)
			}
		}
	}
}
