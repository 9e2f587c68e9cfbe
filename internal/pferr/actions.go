package pferr

import "strings"

// The actions fixes name most often, in one place: each pairs a pflow
// command with the MCP tool of `pflow mcp serve` that does the same.

// DescribeNode shows a node type's params, outputs and an example.
func DescribeNode(nodeType string) *Action {
	return Run("registry describe "+nodeType, "registry_describe", map[string]any{"nodes": []string{nodeType}})
}

// ListNodes lists the node types.
func ListNodes() *Action { return Run("registry list", "registry_list", nil) }

// ListWorkflows lists the saved workflows.
func ListWorkflows() *Action { return Run("workflow list", "workflow_list", nil) }

// Force overwrites what a save would refuse to replace.
func Force() *Action { return Pass("--force", "force", true) }

// SyncServer re-reads an MCP server's tools (only a person can: no tool
// starts servers for an agent).
func SyncServer(server string) *Action { return PersonOnly("mcp sync " + server) }

// SetEnv stores a credential in settings.json's env; an agent passes the
// value it gets from its user.
func SetEnv(key, value string) *Action {
	return Run("settings set-env "+key+"="+value, "settings_set", map[string]any{"key": key, "value": value})
}

// ForAgent rewords, for an agent, the pflow commands a text written for a
// person tells its reader to run ("run 'pflow mcp login github'", as
// Action.Word says it): the tool call that does the same, or "ask the user
// to run ..." when no tool does. A step's failure or warning is worded for
// a person where it is made (it lands in traces, records and ${step.error}
// too); the MCP face rewords it with this.
func ForAgent(text string) string {
	const open = "run 'pflow "
	var b strings.Builder
	for {
		i := strings.Index(text, open)
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i+len(open):], '\'')
		if j < 0 {
			break
		}
		command := text[i+len(open) : i+len(open)+j]
		b.WriteString(text[:i])
		b.WriteString(commandAction(command).Word(Agent))
		text = text[i+len(open)+j+1:]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(text)
	return b.String()
}

// commandAction is the action of running a pflow command line, with its
// tool counterpart when one of the actions above has one.
func commandAction(command string) *Action {
	f := strings.Fields(command)
	switch {
	case len(f) == 3 && f[0] == "settings" && f[1] == "set-env" && strings.Contains(f[2], "="):
		k, v, _ := strings.Cut(f[2], "=")
		return SetEnv(k, v)
	case len(f) == 3 && f[0] == "registry" && f[1] == "describe":
		return DescribeNode(f[2])
	case command == "registry list":
		return ListNodes()
	case command == "workflow list":
		return ListWorkflows()
	}
	return PersonOnly(command)
}
