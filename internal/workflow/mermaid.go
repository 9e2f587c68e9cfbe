package workflow

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// Mermaid renders the workflow's step graph as a Mermaid flowchart (GitHub
// renders it in a ```mermaid block next to the .pflow.md): inputs point at
// the steps that read them, each step shows its id and node type, action edges carry
// their action, a batch step is drawn as a subroutine with what it runs
// over, a nested workflow as a hexagon naming its file or name, and the
// declared outputs come after the steps they read.
func Mermaid(w *Workflow) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	if w == nil {
		return b.String()
	}
	ids := map[string]string{}
	id := func(prefix, name string) string {
		k := prefix + name
		if v, ok := ids[k]; ok {
			return v
		}
		v := prefix + mermaidIDRe().ReplaceAllString(name, "_")
		for taken := true; taken; {
			taken = false
			for _, x := range ids {
				if x == v {
					v += "_"
					taken = true
				}
			}
		}
		ids[k] = v
		return v
	}
	for _, in := range w.Inputs {
		if in == nil {
			continue
		}
		label := "input: " + in.Name
		if in.Type != "" {
			label += " (" + in.Type + ")"
		}
		fmt.Fprintf(&b, "    %s([%s])\n", id("in_", in.Name), quote(label))
	}
	for _, n := range w.Nodes {
		if n == nil {
			continue
		}
		label := n.ID + "<br/>" + n.Type
		open, close := "[", "]"
		if n.Nested() {
			child := value.Stringify(n.Params["workflow_ref"])
			if child == "" {
				child = value.Stringify(n.Params["workflow_name"])
			}
			if child != "" {
				label = n.ID + "<br/>workflow: " + child
			}
			open, close = "{{", "}}"
		}
		if n.Batch != nil {
			over := "an inline list"
			if s, ok := n.Batch.Items.(string); ok {
				over = s
			}
			label += "<br/>batch over " + over
			if n.Batch.Parallel {
				label += ", parallel"
			}
			open, close = "[[", "]]"
		}
		if c, ok := n.Params[stepkeys.When]; ok {
			label += "<br/>when " + value.Stringify(c)
		}
		if n.Type == "switch" {
			open, close = "{", "}"
		}
		fmt.Fprintf(&b, "    %s%s%s%s\n", id("s_", n.ID), open, quote(label), close)
	}
	// Inputs point at the steps that read them.
	for _, n := range w.Nodes {
		if n == nil {
			continue
		}
		seen := map[string]bool{}
		n.EachRef(func(r template.Ref) {
			if h := r.Head; w.Inputs.Get(h) != nil && !seen[h] {
				seen[h] = true
				fmt.Fprintf(&b, "    %s -.-> %s\n", id("in_", h), id("s_", n.ID))
			}
		})
	}
	cases := caseConditions(w)
	for _, e := range w.Edges {
		from, to := id("s_", e.From), id("s_", e.To)
		a := e.ActionOrDefault()
		switch {
		case a != "default":
			if c, ok := cases[e.From][a]; ok {
				a += ": " + c
			} else if n := w.Node(e.From); n != nil && n.Type == "switch" {
				a += " (otherwise)"
			}
			fmt.Fprintf(&b, "    %s -->|%s| %s\n", from, quote(a), to)
		case w.Parallel > 0:
			// In a parallel workflow the chain does not order steps: their
			// dependencies below do, so independent steps stand side by side.
		default:
			fmt.Fprintf(&b, "    %s --> %s\n", from, to)
		}
	}
	if w.Parallel > 0 {
		waits := w.WaitsFor()
		for _, n := range w.Nodes {
			if n == nil {
				continue
			}
			for _, d := range waits[n.ID] {
				fmt.Fprintf(&b, "    %s ==> %s\n", id("s_", d), id("s_", n.ID))
			}
		}
	}
	for _, o := range w.Outputs {
		if o == nil {
			continue
		}
		fmt.Fprintf(&b, "    %s[/%s/]\n", id("out_", o.Name), quote("output: "+o.Name))
		seen := map[string]bool{}
		for _, r := range template.Refs(o.SourceTemplate()) {
			if w.byIDNode(r.Head) && !seen[r.Head] {
				seen[r.Head] = true
				fmt.Fprintf(&b, "    %s -.-> %s\n", id("s_", r.Head), id("out_", o.Name))
			}
		}
	}
	return b.String()
}

// caseConditions maps a switch step's actions to their conditions.
func caseConditions(w *Workflow) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, n := range w.Nodes {
		if n == nil || n.Type != "switch" {
			continue
		}
		list, _ := n.Params["cases"].([]any)
		m := map[string]string{}
		for _, item := range list {
			if c, ok := item.(map[string]any); ok {
				for a, cond := range c {
					m[a] = value.Stringify(cond)
				}
			}
		}
		out[n.ID] = m
	}
	return out
}

var mermaidIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]`) })

// quote makes a Mermaid label: in double quotes, with quotes escaped.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, "#quot;") + `"`
}

func (w *Workflow) byIDNode(id string) bool {
	for _, n := range w.Nodes {
		if n != nil && n.ID == id {
			return true
		}
	}
	return false
}
