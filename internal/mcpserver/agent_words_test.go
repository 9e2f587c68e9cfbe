package mcpserver

import (
	"regexp"
	"strings"
	"testing"
)

// cliCommand finds a CLI command in text meant for an agent ("pflow
// workflow save", "pflow registry list", "--force").
var cliCommand = regexp.MustCompile(`\bpflow (workflow|registry|mcp|settings|runs|cache|instructions|run)\b|--force\b|on the command line`)

// forTheUser is a command an agent is asked to relay to its user: what
// only a person can do (add or sync an MCP server, sign in) has no tool.
var forTheUser = regexp.MustCompile(`ask the user to run 'pflow [^']*'`)

// MCP clients never receive a hint that names a CLI command:
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
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: shell\n- command: echo\n", "resume": "nope"}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: shell\n- comand: echo\n"}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: mcp-nosuch-tool\n"}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: workflow\n- workflow_name: no-such-flow\n"}},
		// A step's own failure, worded for a person where it is made (an
		// LLM without its API key): the agent is told the tool call.
		{"registry_run", map[string]any{"node_type": "llm", "parameters": map[string]any{"model": "openai/gpt-4o", "prompt": "hi"}}},
		{"workflow_execute", map[string]any{"workflow": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: llm\n- model: openai/gpt-4o\n- prompt: hi\n"}},
	}
	// The workflow_save of an existing name (a flag on the command line, an
	// argument over MCP).
	save := map[string]any{"workflow_file": "# X\nY.\n\n## Steps\n\n### a\nA.\n- type: shell\n- command: echo\n", "name": "taken", "description": "x"}
	if r := f.call("workflow_save", save); r.IsError {
		t.Fatalf("first save: %s", r.Text)
	}
	calls = append(calls, struct {
		tool string
		args map[string]any
	}{"workflow_save", save})
	for _, c := range calls {
		r := f.call(c.tool, c.args)
		if m := cliCommand.FindString(forTheUser.ReplaceAllString(r.Text, "")); m != "" {
			t.Errorf("%s %v: an agent is told %q:\n%s", c.tool, c.args, m, r.Text)
		}
	}
	if r := f.call(calls[len(calls)-2].tool, calls[len(calls)-2].args); !strings.Contains(r.Text, `call settings_set with {\"key\":\"OPENAI_API_KEY\"`) {
		t.Errorf("the missing API key is not worded as the settings_set call:\n%s", r.Text)
	}
}
