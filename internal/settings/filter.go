package settings

import (
	"fmt"
	"path"
	"strings"
)

// Candidates returns the names a node is matched by in allow/deny patterns:
//   - its type ("git-log", "mcp-github-create-issue");
//   - for a built-in or user node in a group: "<group>.<type>" and the
//     module-style "pflow.nodes.<group>.<type>" (so the Python pflow's default deny
//     "pflow.nodes.git.*" keeps working; MCP tools never get these, so a
//     server named "github" is not caught by "pflow.nodes.github.*");
//   - for an MCP tool: "<server>.<tool>" with the original and the sanitised
//     tool name, and "mcp.<server>.<tool>".
//
// settings check and the registry filter both use this list, so check always
// reports what the filter does.
func Candidates(nodeType, group, mcpServer, mcpTool string) []string {
	c := make([]string, 1, 6)
	c[0] = nodeType
	add := func(s string) {
		for _, x := range c {
			if x == s {
				return
			}
		}
		c = append(c, s)
	}
	if group != "" && mcpServer == "" {
		add(group + "." + nodeType)
		add("pflow.nodes." + group + "." + nodeType)
	}
	if mcpServer != "" {
		if mcpTool != "" {
			add(mcpServer + "." + mcpTool)
			add("mcp." + mcpServer + "." + mcpTool)
		}
		if short, ok := strings.CutPrefix(nodeType, "mcp-"+mcpServer+"-"); ok {
			add(mcpServer + "." + short)
			add("mcp." + mcpServer + "." + short)
		}
	}
	return c
}

// ValidatePattern checks a glob pattern's syntax.
func ValidatePattern(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("pattern is empty")
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("pattern %q is not a valid glob (use *, ? and [abc]): %v", p, err)
	}
	return nil
}

// PatternMatch is one allow or deny pattern that matched a node.
type PatternMatch struct {
	Pattern     string
	Deny        bool
	Candidate   string // the candidate name it matched
	Specificity int
}

// specificity ranks patterns: an exact name (no wildcard) beats every glob;
// among globs, more literal characters win ("pflow.nodes.git.*" beats "*").
func specificity(p string) int {
	if !strings.ContainsAny(p, "*?[") {
		return 1 << 20
	}
	n := 0
	inClass := false
	for _, r := range p {
		switch {
		case r == '[':
			inClass = true
		case r == ']':
			inClass = false
		case inClass || r == '*' || r == '?':
		default:
			n++
		}
	}
	return n
}

// Matches returns every allow and deny pattern that matches one of the candidates.
func (f NodeFilter) Matches(candidates ...string) []PatternMatch {
	var out []PatternMatch
	scan := func(pats []string, deny bool) {
		for _, p := range pats {
			for _, c := range candidates {
				if globMatch(p, c) {
					out = append(out, PatternMatch{Pattern: p, Deny: deny, Candidate: c, Specificity: specificity(p)})
					break
				}
			}
		}
	}
	scan(f.Allow, false)
	scan(f.Deny, true)
	return out
}

// Decide applies the filter precedence to a node's candidate names:
//
//  1. Every allow and deny pattern is matched against every candidate.
//  2. The most specific matching pattern decides: an exact name beats any
//     glob, and a glob with more literal characters beats a shorter one. So
//     'allow git-log' re-enables one node under 'deny pflow.nodes.git.*', and
//     'allow pflow.nodes.git.*' beats 'deny pflow.nodes.*'.
//  3. On a tie between an allow and a deny, deny wins.
//  4. A node no pattern matches is excluded (the default allow list is "*").
//
// The reason says which pattern decided and why.
func (f NodeFilter) Decide(candidates ...string) (bool, string, []PatternMatch) {
	ms := f.Matches(candidates...)
	if len(ms) == 0 {
		return false, "no allow pattern matches it (allow list: " + strings.Join(quoteAll(f.Allow), ", ") + ")", ms
	}
	best := ms[0]
	for _, m := range ms[1:] {
		if m.Specificity > best.Specificity || (m.Specificity == best.Specificity && m.Deny && !best.Deny) {
			best = m
		}
	}
	var overridden []string
	for _, m := range ms {
		if m.Deny != best.Deny {
			overridden = append(overridden, fmt.Sprintf("%s '%s'", kind(m.Deny), m.Pattern))
		}
	}
	reason := fmt.Sprintf("%s pattern '%s' matches '%s'", kind(best.Deny), best.Pattern, best.Candidate)
	if len(overridden) > 0 {
		how := "is more specific than"
		for _, m := range ms {
			if m.Deny != best.Deny && m.Specificity == best.Specificity {
				how = "ties with, and deny wins over,"
			}
		}
		reason += " and " + how + " " + strings.Join(overridden, ", ")
	}
	return !best.Deny, reason, ms
}

func kind(deny bool) string {
	if deny {
		return "deny"
	}
	return "allow"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "'" + s + "'"
	}
	if len(out) == 0 {
		return []string{"(empty)"}
	}
	return out
}

// NodeAllowed reports whether a node with the given candidate names (see
// Candidates) passes the allow/deny filter, and why. See NodeFilter.Decide
// for the precedence.
func (s *Settings) NodeAllowed(candidates ...string) (bool, string) {
	ok, reason, _ := s.Registry.Nodes.Decide(candidates...)
	return ok, reason
}

// globMatch is path.Match with fast paths for the common shapes ("*",
// exact names, "prefix*").
func globMatch(p, c string) bool {
	switch i := strings.IndexAny(p, "*?[\\"); {
	case p == "*":
		return true
	case i < 0:
		return p == c
	case i == len(p)-1 && p[i] == '*':
		return strings.HasPrefix(c, p[:i])
	}
	ok, _ := path.Match(p, c)
	return ok
}
