package pferr

import "testing"

// A fix is data; each reader gets its own words for it: a pflow command
// for a person, a tool call (or what to ask its user) for an agent.
func TestFixSayWordsTheActionForEachReader(t *testing.T) {
	tests := []struct {
		name          string
		fix           Fix
		person, agent string
	}{
		{"command with a tool, placeholder first",
			Fix{Text: "{do} to see the available node types.", Do: ListNodes()},
			"Run 'pflow registry list' to see the available node types.",
			"Call registry_list to see the available node types."},
		{"tool arguments as JSON, not HTML-escaped",
			Fix{Text: "To see them, {do}.", Do: DescribeNode("<node>")},
			"To see them, run 'pflow registry describe <node>'.",
			`To see them, call registry_describe with {"nodes":["<node>"]}.`},
		{"a flag and its tool argument",
			Fix{Text: "{do} to overwrite it, or choose a different name.", Do: Force()},
			"Pass --force to overwrite it, or choose a different name.",
			"Pass force: true to overwrite it, or choose a different name."},
		{"only a person can: the agent asks its user",
			Fix{Text: "Then {do}.", Do: SyncServer("github")},
			"Then run 'pflow mcp sync github'.",
			"Then ask the user to run 'pflow mcp sync github'."},
		{"an agent's own way when no tool does it",
			Fix{Text: "To see the run ids, {do}.", Do: &Action{Command: "runs", Instead: "use the run_id of an earlier result"}},
			"To see the run ids, run 'pflow runs'.",
			"To see the run ids, use the run_id of an earlier result."},
		{"no placeholder: the action follows as a sentence",
			Fix{Text: "The server changed.", Do: SyncServer("x")},
			"The server changed. Run 'pflow mcp sync x'.",
			"The server changed. Ask the user to run 'pflow mcp sync x'."},
		{"words only",
			Fix{Text: "Did you mean 'shell'?", Replacement: "shell"},
			"Did you mean 'shell'?", "Did you mean 'shell'?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.fix.Say(Person); got != tc.person {
				t.Errorf("person reads %q, want %q", got, tc.person)
			}
			if got := tc.fix.Say(Agent); got != tc.agent {
				t.Errorf("agent reads %q, want %q", got, tc.agent)
			}
		})
	}
}

func TestErrorAdviceJoinsHintAndFixes(t *testing.T) {
	e := New(NotFound, "Tool x not found").WithHint("The server no longer offers this tool.").
		WithFix(Fix{Text: "{do} to re-read its tools.", Do: SyncServer("s")})
	want := "The server no longer offers this tool.\nAsk the user to run 'pflow mcp sync s' to re-read its tools."
	if got := e.Advice(Agent); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := New(NotFound, "x").Advice(Person); got != "" {
		t.Errorf("no hint, no fix: got %q", got)
	}
}
