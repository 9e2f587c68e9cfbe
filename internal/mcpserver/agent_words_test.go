package mcpserver

import (
	"regexp"
	"testing"
)

// cliCommand finds a CLI command in text meant for an agent ("pflow
// workflow save", "pflow registry list", "--force").
var cliCommand = regexp.MustCompile(`\bpflow (workflow|registry|mcp|settings|runs|cache|instructions|run)\b|--force\b|on the command line`)

// MCP clients never receive a hint that names a CLI command (issue #10):
// every failure of the common mistakes below is worded in tool terms.
func TestAgentsNeverGetCLICommands(t *testing.T) {
	f := newFixture(t, nil)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"workflow_execute", map[string]any{"workflow": "no-such-flow"}},
		{"workflow_validate", map[string]any{"workflow": "no-such-flow"}},
		{"workflow_describe", map[string]any{"name": "no-such-flow"}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: shelll\n- command: echo\n"}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: shell\n"}},
		{"workflow_save", map[string]any{"workflow_file": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: nope\n", "name": "x", "description": "x"}},
		{"registry_describe", map[string]any{"nodes": []any{"nope-node"}}},
		{"registry_run", map[string]any{"node_type": "nope-node", "parameters": map[string]any{}}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: shell\n- command: exit 3\n"}},
	}
	for _, c := range calls {
		r := f.call(c.tool, c.args)
		if m := cliCommand.FindString(r.Text); m != "" {
			t.Errorf("%s %v: an agent is told %q:\n%s", c.tool, c.args, m, r.Text)
		}
	}
}
