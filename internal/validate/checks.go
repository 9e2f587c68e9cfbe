package validate

import (
	"fmt"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/suggest"
)

// ArgsParam is an MCP step's block of tool arguments, passed verbatim: the
// way to set an argument named like a step key or control.
const ArgsParam = stepkeys.Args

func declares(s *node.Spec, key string) bool {
	_, ok := s.Interface.Param(key)
	return ok
}

const maxListed = 20

// maxQuoted is the longest param or source text a per-reference diagnostic
// quotes in full; longer text is shown clipped or as the reference alone.
const maxQuoted = 200

// ---------------------------------------------------------------- layer 5

func (v *validator) nodeTypes() {
	if v.opts.Catalog == nil {
		return
	}
	types := v.opts.Catalog.Types()
	for _, n := range v.nodes {
		if !v.unknown[n.ID] || n.Type == "" {
			continue
		}
		var fixes []pferr.Fix
		at := pferr.Fix{Step: n.ID, Param: "type", Line: n.Line}
		if a, ok := typeAliases[strings.ToLower(n.Type)]; ok && slices.Contains(types, a) {
			f := at
			f.Text, f.Replacement, f.Alternatives = fmt.Sprintf("Did you mean '%s'? (pflow's node for what '%s' does)", a, n.Type), a, []string{a}
			fixes = append(fixes, f)
		} else if s := suggest.Closest(n.Type, types, 3, 0.6); len(s) > 0 {
			f := at
			f.Text, f.Replacement, f.Alternatives = fmt.Sprintf("Did you mean '%s'?", s[0]), s[0], s
			if len(s) > 1 {
				f.Text = "Did you mean one of these? " + quoteList(s)
			}
			fixes = append(fixes, f)
		}
		if strings.HasPrefix(n.Type, "mcp-") {
			fixes = append(fixes,
				pferr.Fix{Text: "MCP tools become node types when their server is synced; to see the servers, {do}.", Do: pferr.PersonOnly("mcp list")},
				pferr.Fix{Text: "To add a server that is not there, {do} (its entry in the mcpServers format of Claude Desktop, Claude Code and Cursor, or the path of such a config file).", Do: pferr.PersonOnly(`mcp add '{"<server>": {"command": "<command>", "args": ["<arg>"]}}'`)},
				pferr.Fix{Text: "Then {do}.", Do: pferr.SyncServer("<server>")})
		}
		fixes = append(fixes, pferr.Fix{Text: "{do} to see the available node types.", Do: pferr.ListNodes()})
		v.add(layerTypes, Diagnostic{
			Message: fmt.Sprintf("Unknown node type: '%s'", n.Type) + fmt.Sprintf(" (step '%s')", n.ID),
			NodeID:  n.ID, Param: "type", Line: n.Line,
			Fixes: fixes,
		})
	}
}

// typeAliases maps the names agents reach for to pflow's node type that
// does the same job, so an unknown type is suggested by meaning, not only by
// spelling.
var typeAliases = map[string]string{
	"python": "code", "python3": "code", "py": "code", "javascript": "code", "js": "code", "script": "code",
	"curl": "http", "wget": "http", "fetch": "http", "request": "http", "requests": "http", "api": "http", "get": "http", "post": "http",
	"bash": "shell", "sh": "shell", "zsh": "shell", "cmd": "shell", "exec": "shell", "command": "shell", "run": "shell",
	"cat": "read-file", "read": "read-file", "readfile": "read-file", "file": "read-file",
	"write": "write-file", "writefile": "write-file", "save": "write-file",
	"openai": "llm", "gpt": "llm", "claude": "llm", "ai": "llm", "prompt": "llm", "chat": "llm",
}

// nodeChecks runs each node type's own static check (e.g. Python syntax of
// a code step) on steps whose params it reads are literal.
func (v *validator) nodeChecks() {
	if v.opts.Catalog == nil {
		return
	}
	for _, n := range v.nodes {
		if v.unknown[n.ID] {
			continue
		}
		spec, ok := v.opts.Catalog.Lookup(n.Type)
		if !ok || spec.Check == nil {
			continue
		}
		for _, p := range spec.Check(v.ctx, n.Params) {
			line := n.Line
			if start, ok := n.SourceLines[p.Param]; ok && p.Line > 0 {
				line = start + p.Line - 1
			}
			v.add(layerTypes, Diagnostic{Message: fmt.Sprintf("Step '%s' (%s): %s", n.ID, n.Type, p.Message),
				NodeID: n.ID, Param: p.Param, Line: line, Hint: p.Hint})
		}
	}
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, ", ")
}
