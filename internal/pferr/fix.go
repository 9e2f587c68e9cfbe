package pferr

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Reader is who a fix is worded for: a person at a shell reads pflow
// commands and flags, an agent talking to `pflow mcp serve` reads tool calls
// and tool arguments (an agent never gets a CLI command).
type Reader int

const (
	// Person reads the CLI's text or JSON output.
	Person Reader = iota
	// Agent reads the MCP server's results.
	Agent
)

// Action is what the reader does to fix a problem, as data: the pflow
// command (or flag) a person uses and the MCP tool call (or argument) an
// agent makes for the same thing. An action with a command and no tool is
// one only a person can take (signing in through a browser, adding an MCP
// server): an agent is told to ask its user.
type Action struct {
	// Command is a pflow command line without "pflow": "registry describe shell".
	Command string `json:"command,omitempty"`
	// Flag is a flag to pass to the command that failed: "--force".
	Flag string `json:"flag,omitempty"`
	// Tool is the MCP tool that does the same: "registry_describe".
	Tool string `json:"tool,omitempty"`
	// Args are the tool's arguments, or (with Flag) the argument that is
	// the flag's counterpart: {"force": true}.
	Args map[string]any `json:"arguments,omitempty"`
	// Instead is what an agent does when no tool does the command, as a
	// verb phrase ("use the run_id of an earlier result"); "" asks the
	// user to run the command.
	Instead string `json:"-"`
}

// Run is the action of running a pflow command that has a tool
// counterpart (tool may be ""; args may be nil).
func Run(command, tool string, args map[string]any) *Action {
	return &Action{Command: command, Tool: tool, Args: args}
}

// PersonOnly is the action of running a pflow command that no MCP tool
// does: an agent is told to ask its user to run it.
func PersonOnly(command string) *Action { return &Action{Command: command} }

// Pass is the action of passing a flag (a person) or a tool argument (an
// agent) to what failed.
func Pass(flag, arg string, v any) *Action {
	return &Action{Flag: flag, Args: map[string]any{arg: v}}
}

// Word says the action for r, as a verb phrase: "run 'pflow registry
// list'", "call registry_list", "pass --force", "pass force: true", "ask
// the user to run 'pflow mcp login github'".
func (a *Action) Word(r Reader) string {
	if a == nil {
		return ""
	}
	if a.Flag != "" {
		if r == Agent {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(a.Args)) {
				parts = append(parts, k+": "+compact(a.Args[k]))
			}
			return "pass " + strings.Join(parts, ", ")
		}
		return "pass " + a.Flag
	}
	if r == Agent {
		if a.Tool == "" && a.Instead != "" {
			return a.Instead
		}
		if a.Tool == "" {
			return "ask the user to run 'pflow " + a.Command + "'"
		}
		if len(a.Args) == 0 {
			return "call " + a.Tool
		}
		return "call " + a.Tool + " with " + compact(a.Args)
	}
	return "run 'pflow " + a.Command + "'"
}

// Fix is how to fix one problem, as data: what to do (Text, Do), where
// (File, Line, Step, Param), what to write instead (Replacement) and the
// names that were probably meant (Alternatives). Each face words it for
// its reader with Say.
type Fix struct {
	// Text is the advice. "{do}" marks where Do is said; without it, Do is
	// said as a sentence after Text.
	Text string
	Do   *Action
	File string
	Line int
	// Step and Param name the step and the param to change.
	Step  string
	Param string
	// Replacement is what to write instead (a name, a line, a value).
	Replacement string
	// Alternatives are the names that were probably meant, best first.
	Alternatives []string
}

// Say words the fix for r as one or more lines.
func (f Fix) Say(r Reader) string {
	do := f.Do.Word(r)
	switch {
	case do == "":
		return f.Text
	case strings.Contains(f.Text, "{do}"):
		i := strings.Index(f.Text, "{do}")
		if strings.TrimSpace(f.Text[:i]) == "" || strings.HasSuffix(strings.TrimSpace(f.Text[:i]), ".") {
			do = capitalize(do)
		}
		return strings.Replace(f.Text, "{do}", do, 1)
	case f.Text == "":
		return capitalize(do) + "."
	default:
		return f.Text + " " + capitalize(do) + "."
	}
}

// Say words every fix for r, one per line.
func Say(fixes []Fix, r Reader) string {
	var lines []string
	for _, f := range fixes {
		if s := f.Say(r); s != "" {
			lines = append(lines, s)
		}
	}
	return strings.Join(lines, "\n")
}

func capitalize(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(c)) + s[n:]
}

func compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSpace(b.String())
}
