package pferr

import "testing"

// A person's "run 'pflow …'" becomes the tool call an agent makes, or a
// request to its user when no tool does the command; other text is kept.
func TestForAgent(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Server github needs sign-in: run 'pflow mcp login github'",
			"Server github needs sign-in: ask the user to run 'pflow mcp login github'"},
		{"API key required. Set OPENAI_API_KEY: run 'pflow settings set-env OPENAI_API_KEY=<your-key>' (or export it)",
			`API key required. Set OPENAI_API_KEY: call settings_set with {"key":"OPENAI_API_KEY","value":"<your-key>"} (or export it)`},
		{"changed: run 'pflow mcp sync x', then run 'pflow registry list'",
			"changed: ask the user to run 'pflow mcp sync x', then call registry_list"},
		{"no command here, 'pflow' in quotes", "no command here, 'pflow' in quotes"},
		{"unclosed run 'pflow mcp", "unclosed run 'pflow mcp"},
	} {
		if got := ForAgent(c.in); got != c.want {
			t.Errorf("ForAgent(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
