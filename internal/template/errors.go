package template

import (
	"fmt"
	"github.com/pflow-go/pflow/internal/suggest"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/value"
)

// UnresolvedVarsError is the strict-mode failure for one param whose
// templates could not all be resolved.
type UnresolvedVarsError struct {
	Param string
	// Vars are the unresolved templates as written ("${a.b}").
	Vars []string
	msg  string
}

func (e *UnresolvedVarsError) Error() string { return e.msg }

const (
	maxContextKeys = 20
	maxPreview     = 50
	maxActual      = 60
	maxStderr      = 500
)

// UnresolvedError builds the strict-mode report (as in the Python pflow) for
// one param: every unresolved variable at once with what is wrong
// with it, the available context keys with types (keys not starting with "__",
// sorted, at most 20), a JSON-parsing hint when a path runs into a string that
// is not JSON, did-you-mean suggestions, and the stderr of a referenced
// upstream node when it has any.
func UnresolvedError(param string, unresolved []string, root map[string]any) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Unresolved variables in parameter '%s': %s\n", param, strings.Join(unresolved, ", "))

	var problems, jsonHints, suggestions []string
	var stderrNodes []string
	for _, raw := range unresolved {
		d := diagnose(root, raw)
		if d.problem != "" {
			problems = append(problems, fmt.Sprintf("  %s: %s", raw, d.problem))
		}
		if d.jsonHint != "" {
			jsonHints = append(jsonHints, d.jsonHint)
		}
		if d.suggestion != "" {
			suggestions = append(suggestions, fmt.Sprintf("  Did you mean '%s'? (instead of '%s')", d.suggestion, raw))
		}
		if d.head != "" && !slices.Contains(stderrNodes, d.head) {
			stderrNodes = append(stderrNodes, d.head)
		}
	}
	if len(problems) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.Join(problems, "\n"))
		b.WriteString("\n")
	}

	b.WriteString("\nAvailable context keys:\n")
	keys := make([]string, 0, len(root))
	for k := range root {
		if !strings.HasPrefix(k, "__") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		b.WriteString("  (none)\n")
	}
	for i, k := range keys {
		if i == maxContextKeys {
			fmt.Fprintf(&b, "  ... and %d more\n", len(keys)-maxContextKeys)
			break
		}
		v := root[k]
		fmt.Fprintf(&b, "  • %s (%s)", k, value.TypeName(v))
		switch m := v.(type) {
		case string, int64, float64, bool:
			fmt.Fprintf(&b, ": %s", value.Preview(v, maxPreview))
		case map[string]any:
			if sub := value.SortedKeys(m); len(sub) > 0 {
				if len(sub) > 8 {
					sub = append(sub[:8:8], "...")
				}
				fmt.Fprintf(&b, ": keys %s", strings.Join(sub, ", "))
			}
		}
		b.WriteString("\n")
	}

	if len(jsonHints) > 0 {
		b.WriteString("\n⚠️ JSON parsing issue:\n")
		b.WriteString(strings.Join(jsonHints, "\n"))
		b.WriteString("\n  Fix: Ensure upstream node outputs valid JSON.\n")
	} else if len(suggestions) > 0 {
		b.WriteString("\n💡 Suggestions:\n")
		b.WriteString(strings.Join(suggestions, "\n"))
		b.WriteString("\n")
	}

	for _, id := range stderrNodes {
		ns, ok := root[id].(map[string]any)
		if !ok {
			continue
		}
		se, _ := ns["stderr"].(string)
		se = strings.TrimSpace(se)
		if se == "" {
			continue
		}
		se = value.Truncate(se, maxStderr, "...")
		fmt.Fprintf(&b, "\n  ⚠️  Upstream node '%s' stderr:\n     %s\n", id, strings.ReplaceAll(se, "\n", "\n     "))
	}
	return &UnresolvedVarsError{Param: param, Vars: append([]string(nil), unresolved...), msg: strings.TrimRight(b.String(), "\n")}
}

type diagnosis struct {
	head       string // node/namespace the ref starts at, when it exists
	problem    string
	jsonHint   string
	suggestion string
}

// diagnose walks raw ("${a.b[0]}") through root and explains where it breaks.
func diagnose(root map[string]any, raw string) diagnosis {
	ref, ok := IsSimple(raw)
	if !ok {
		return diagnosis{problem: "not a valid template"}
	}
	var d diagnosis
	cur, found := root[ref.Head]
	if !found {
		cands := make([]string, 0, len(root))
		for k := range root {
			if !strings.HasPrefix(k, "__") {
				cands = append(cands, k)
			}
		}
		sort.Strings(cands)
		d.problem = fmt.Sprintf("'%s' is not a workflow input or the output namespace of a node that has run", ref.Head)
		if s := suggest.Closest(ref.Head, cands, 1, 0.6); len(s) > 0 {
			d.suggestion = "${" + JoinPath(s[0], ref.Segments) + "}"
		}
		return d
	}
	if _, isMap := cur.(map[string]any); isMap {
		d.head = ref.Head
	}
	prefix := ref.Head
	for i, seg := range ref.Segments {
		rest := ref.Segments[i+1:]
		if seg.IsIndex {
			n := seg.Index
			if seg.Dynamic() {
				iv, ok := Lookup(root, seg.Key)
				if !ok {
					d.problem = fmt.Sprintf("the index ${%s} is unresolved", seg.Key)
					return d
				}
				idx, ok := asIndex(iv)
				if !ok {
					d.problem = fmt.Sprintf("the index ${%s} is %s %s, not an integer", seg.Key, value.TypeName(iv), value.Preview(iv, maxPreview))
					return d
				}
				n = idx
			}
			c := containerOf(cur)
			l, isList := c.([]any)
			if !isList {
				if s, isStr := cur.(string); isStr {
					d.problem = fmt.Sprintf("${%s} is a string, not a JSON array", prefix)
					d.jsonHint = jsonHint(prefix, seg, s)
				} else {
					d.problem = fmt.Sprintf("${%s} is %s, not a list; it cannot be indexed", prefix, typeDesc(cur))
				}
				return d
			}
			if n < 0 || n >= len(l) {
				d.problem = fmt.Sprintf("index %d is out of range: ${%s} has %d item(s)", n, prefix, len(l))
				return d
			}
			cur = l[n]
			prefix += seg.String()
			continue
		}
		c := containerOf(cur)
		m, isMap := c.(map[string]any)
		if !isMap {
			switch x := cur.(type) {
			case string:
				d.problem = fmt.Sprintf("${%s} is a string, not a JSON object", prefix)
				d.jsonHint = jsonHint(prefix, seg, x)
			case nil:
				d.problem = fmt.Sprintf("${%s} is null, so '.%s' cannot be read from it", prefix, seg.Key)
			default:
				d.problem = fmt.Sprintf("${%s} is %s, not a dict; it has no key '%s'", prefix, typeDesc(cur), seg.Key)
			}
			return d
		}
		next, ok := m[seg.Key]
		if !ok {
			keys := value.SortedKeys(m)
			shown := keys
			if len(shown) > 10 {
				shown = append(shown[:10:10], "...")
			}
			if len(keys) == 0 {
				d.problem = fmt.Sprintf("${%s} has no key '%s' (it is empty)", prefix, seg.Key)
			} else {
				d.problem = fmt.Sprintf("${%s} has no key '%s' (it has: %s)", prefix, seg.Key, strings.Join(shown, ", "))
			}
			if s := suggest.Closest(seg.Key, keys, 1, 0.6); len(s) > 0 {
				d.suggestion = "${" + prefix + "." + s[0] + JoinPath("", rest) + "}"
			}
			return d
		}
		cur = next
		prefix += seg.String()
	}
	d.problem = "could not be resolved"
	return d
}

func typeDesc(v any) string {
	t := value.TypeName(v)
	switch t {
	case "int", "float", "bool":
		return t + " " + value.Stringify(v)
	case "list":
		return "a list"
	case "dict":
		return "a dict"
	}
	return t
}

func jsonHint(prefix string, seg Segment, s string) string {
	actual := s
	if r := []rune(actual); len(r) > maxActual {
		actual = string(r[:maxActual]) + "..."
	}
	access := seg.String()
	return fmt.Sprintf("  ${%s} is a string, not JSON. Nested access (%s) requires valid JSON.\n    Actual value: %s",
		prefix, access, strconv.Quote(actual))
}
