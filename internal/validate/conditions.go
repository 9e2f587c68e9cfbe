package validate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/cond"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// conditions checks what decides whether a step runs: a `when` or a switch
// case that always gives the same answer, a switch case with no edge, a
// step that reads the output of a step that may not have run, and the
// ordering of a parallel workflow.
func (v *validator) conditions() {
	for _, n := range v.nodes {
		if raw, ok := v.ownControl(n, stepkeys.When); ok {
			x, err := stepkeys.ParseWhen(raw)
			if err != nil {
				d := Diagnostic{Message: fmt.Sprintf("Step '%s': %v", n.ID, err), NodeID: n.ID, Param: stepkeys.When, Line: v.line(n.ID),
					Hint: "Write a condition over the run's data: '- when: ${count.stdout} > 0' (see docs/workflow-format.md, Conditions)."}
				var ce *cond.Error
				if errors.As(err, &ce) {
					d.Message = fmt.Sprintf("Step '%s': in '- when: %v', %s", n.ID, raw, strings.TrimSuffix(ce.Message, "."))
					d.Hint = ce.Fix
				}
				v.add(layerDataFlow, d)
			}
			if err == nil && n.Batch != nil {
				for _, r := range x.Refs {
					if r.Head == n.Batch.Alias() || r.Head == "__index__" {
						v.add(layerDataFlow, Diagnostic{
							Message: fmt.Sprintf("Step '%s': its condition reads %s, but a batch step's 'when' is decided once, before its items run", n.ID, r.Raw),
							NodeID:  n.ID, Param: stepkeys.When, Line: v.line(n.ID),
							Hint: "Choose the items first: filter the list in a shell or code step (e.g. jq 'map(select(...))') and batch over its output; or decide inside each item's command. A step's '- when:' reads inputs and earlier steps' outputs.",
						})
						break
					}
				}
			}
			if err == nil {
				v.comparisons(n, stepkeys.When, x)
				if val, constant := x.Constant(); constant {
					v.add(layerDataFlow, Diagnostic{
						Message: fmt.Sprintf("Step '%s': its condition '%v' reads no data, so it is always %v", n.ID, raw, val),
						NodeID:  n.ID, Param: stepkeys.When, Line: v.line(n.ID),
						Hint: constantFix(val, "step"),
					})
				}
			}
		}
		if spec := v.specs[n.ID]; spec != nil && n.Type == "switch" {
			v.switchCases(n)
		}
		if what, ok := map[string]string{"ask": "an ask", "switch": "a switch"}[n.Type]; ok && n.Batch != nil {
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Step '%s': %s step does not run per item, but it has a batch", n.ID, what),
				NodeID:  n.ID, Param: "batch", Line: v.line(n.ID),
				Hint: fmt.Sprintf("Remove the batch: %s step decides once for the run (show the whole list in its message or conditions), and the batch of the step after it handles the items.", what),
			})
		}
	}
	v.skippableReads()
	v.parallelOrder()
}

// comparisons refuses an operation whose template value has a type it
// cannot work on: an object or a list compared with <, > or a literal, or
// searched with contains (which reads text).
func (v *validator) comparisons(n *workflow.Node, param string, x *cond.Expr) {
	typeOf := func(o cond.Operand) string {
		if o.Ref < 0 {
			return ""
		}
		r := x.Refs[o.Ref]
		if t, ok := v.refTypes[refTypeKey(n.ID, param, r.Raw)]; ok {
			return canonTypeOrAny(t)
		}
		return "any" // a switch case: the values' types are checked at run time
	}
	reported := map[int]bool{}
	for _, op := range x.Ops {
		for _, side := range []struct{ me, other cond.Operand }{{op.Left, op.Right}, {op.Right, op.Left}} {
			if side.me.Ref < 0 || reported[side.me.Ref] {
				continue
			}
			typ := typeOf(side.me)
			if typ != "dict" && typ != "list" {
				continue
			}
			what := map[string]string{"dict": "an object", "list": "a list"}[typ]
			raw := x.Refs[side.me.Ref].Raw
			inner := strings.TrimSuffix(strings.TrimPrefix(raw, "${"), "}")
			var fix string
			switch op.Operator {
			case "<", ">", "<=", ">=", "+", "-", "*", "/", "%":
				fix = fmt.Sprintf("Compare one of its fields (${%s.<field>} %s …) or its size (len(%s) %s …).", inner, op.Operator, raw, op.Operator)
			case "==", "!=":
				if side.other.Kind != "number" && side.other.Kind != "text" && side.other.Kind != "bool" {
					continue
				}
				fix = fmt.Sprintf("Compare one of its fields (${%s.<field>} %s …), or test it with empty(%s).", inner, op.Operator, raw)
			case "contains", "startsWith", "endsWith":
				if side.me != op.Left {
					continue
				}
				fix = fmt.Sprintf("To test whether %s holds an item, write '\"<item>\" in %s'.", what, raw)
				if typ == "dict" {
					fix = fmt.Sprintf("To test whether the object has a key, write '\"<key>\" in %s'.", raw)
				}
			default:
				continue
			}
			reported[side.me.Ref] = true
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Step '%s': in its condition, %s is %s, which '%s' cannot work on", n.ID, raw, what, op.Operator),
				NodeID:  n.ID, Param: param, Line: v.line(n.ID), Hint: fix,
			})
		}
	}
}

func constantFix(val bool, what string) string {
	if val {
		return fmt.Sprintf("Compare data from the run (e.g. '${count.stdout} > 0'), or remove the condition: the %s always runs.", what)
	}
	return fmt.Sprintf("Compare data from the run (e.g. '${count.stdout} > 0'), or remove the %s: it never runs.", what)
}

// ownControl returns a control step key's value when the step's node does
// not declare a param of that name.
func (v *validator) ownControl(n *workflow.Node, key string) (any, bool) {
	raw, ok := n.Params[key]
	if !ok {
		return nil, false
	}
	if spec := v.specs[n.ID]; spec != nil {
		if _, declared := spec.Interface.Param(key); declared {
			return nil, false
		}
	}
	return raw, true
}

// switchCases checks a switch step's cases: each compiles, reads data, and
// has an edge.
func (v *validator) switchCases(n *workflow.Node) {
	cases, err := cond.ParseCases(n.Params["cases"])
	if err != nil {
		if _, ok := n.Params["cases"]; ok {
			v.add(layerDataFlow, Diagnostic{Message: fmt.Sprintf("Step '%s': %v", n.ID, err), NodeID: n.ID, Param: "cases", Line: v.line(n.ID)})
		}
		return
	}
	edges := map[string]bool{}
	for _, e := range v.w.Edges {
		if e.From == n.ID {
			edges[e.ActionOrDefault()] = true
		}
	}
	for _, c := range cases {
		x, err := cond.Compile(c.When)
		if err != nil {
			v.add(layerDataFlow, Diagnostic{Message: fmt.Sprintf("Step '%s', case '%s': %v", n.ID, c.Action, err), NodeID: n.ID, Param: "cases", Line: v.line(n.ID)})
			continue
		}
		v.comparisons(n, "cases", x)
		if val, constant := x.Constant(); constant {
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Step '%s', case '%s': its condition '%s' reads no data, so it is always %v", n.ID, c.Action, c.When, val),
				NodeID:  n.ID, Param: "cases", Line: v.line(n.ID), Hint: constantFix(val, "case's branch"),
			})
		}
		if !edges[c.Action] {
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Step '%s', case '%s' has no edge: when it holds, the workflow would end there", n.ID, c.Action),
				NodeID:  n.ID, Param: "cases", Line: v.line(n.ID),
				Hint: fmt.Sprintf("Route it: add '%s: <step>' to the step's '- on:' edges.", c.Action),
			})
		}
	}
}

// skippableReads refuses a template that reads a step which may not have
// run when the reading step runs: a step with a `when`, or one that is not
// on every path to the reader (a branch of a switch or an on_error edge).
// Its outputs would be absent. A condition may read it with a default
// (${step.out} ?? "").
func (v *validator) skippableReads() {
	dom := v.dominators()
	if dom == nil {
		return
	}
	for _, n := range v.nodes {
		if !dom.reached(n.ID) {
			continue // unreachable steps are reported elsewhere
		}
		defaulted := v.defaultedRefs(n)
		reported := map[string]bool{}
		for _, r := range v.stepRefs(n, defaulted) {
			t := v.byID[r.Head]
			if t == nil || t.ID == n.ID || reported[t.ID] {
				continue
			}
			if !dom.reached(t.ID) || !v.runsBefore(t.ID, n.ID) {
				continue // checkOrder reports a step that never runs before
			}
			_, conditional := v.ownControl(t, stepkeys.When)
			if dom.dominates(t.ID, n.ID) && !conditional {
				continue
			}
			if conditional && v.sameCondition(t, n) {
				continue
			}
			reported[t.ID] = true
			why := fmt.Sprintf("'%s' is not on every path to '%s'", t.ID, n.ID)
			if conditional {
				why = fmt.Sprintf("'%s' is skipped when its condition is false", t.ID)
			} else if src := v.branchOf(t.ID); src != "" {
				why = fmt.Sprintf("'%s' runs only on the %s", t.ID, src)
			}
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Step '%s' reads %s, but %s: its outputs would be absent", n.ID, r.Raw, why),
				NodeID:  n.ID, Line: v.line(n.ID),
				Hint: fmt.Sprintf("Read it in a step on the same branch; or publish each branch's value under one name ('- output_mappings: {stdout: result}' on each branch step) and read ${result}; or, in a condition, give a default: '%s ?? \"\"'.", r.Raw),
			})
		}
	}
}

// stepRefs are the template references of a step's params, batch items and
// input mappings, but for those its conditions give a default.
func (v *validator) stepRefs(n *workflow.Node, defaulted map[string]bool) []template.Ref {
	var out []template.Ref
	walk := func(x any, condition bool) {
		template.EachString(x, func(s string) {
			for _, r := range template.Refs(s) {
				if !(condition && defaulted[r.Raw]) {
					out = append(out, r)
				}
			}
		})
	}
	for _, k := range value.SortedKeys(n.Params) {
		if n.Nested() && k == "workflow_ir" {
			continue
		}
		walk(n.Params[k], k == stepkeys.When || (k == "cases" && n.Type == "switch"))
	}
	if n.Batch != nil {
		walk(n.Batch.Items, false)
	}
	if m := v.w.Mappings[n.ID]; m != nil {
		for _, p := range m.InputMappings {
			walk("${"+strings.TrimSuffix(strings.TrimPrefix(p, "${"), "}")+"}", false)
		}
	}
	return out
}

// defaultedRefs are the references of a step's conditions that give a
// default with ??.
func (v *validator) defaultedRefs(n *workflow.Node) map[string]bool {
	out := map[string]bool{}
	note := func(src string) {
		x, err := cond.Compile(src)
		if err != nil {
			return
		}
		for i, r := range x.Refs {
			if x.Defaulted[i] {
				out[r.Raw] = true
			}
		}
	}
	if raw, ok := v.ownControl(n, stepkeys.When); ok {
		if s, isStr := raw.(string); isStr {
			note(s)
		}
	}
	if n.Type == "switch" {
		if cases, err := cond.ParseCases(n.Params["cases"]); err == nil {
			for _, c := range cases {
				note(c.When)
			}
		}
	}
	return out
}

// sameCondition reports whether reader runs only under the condition of t
// (it carries the same when).
func (v *validator) sameCondition(t, reader *workflow.Node) bool {
	a, _ := v.ownControl(t, stepkeys.When)
	b, ok := v.ownControl(reader, stepkeys.When)
	return ok && fmt.Sprint(a) == fmt.Sprint(b)
}

// branchOf names the edge that leads to a branch step ("'none' branch of
// 'size'"), or "" when it has a default edge in.
func (v *validator) branchOf(id string) string {
	for _, e := range v.w.Edges {
		if e.To == id && e.ActionOrDefault() != "default" {
			return fmt.Sprintf("'%s' branch of '%s'", e.ActionOrDefault(), e.From)
		}
	}
	return ""
}

// domTree is the dominator tree of the steps reachable from the start:
// a step dominates another when every path from the start to the other
// goes through it. Built in near-linear time (Cooper, Harvey and Kennedy's
// iterative algorithm over the reverse postorder); a query is two
// comparisons of the tree's pre- and postorder numbers.
type domTree struct {
	num       map[string]int // a reachable step's reverse-postorder number
	pre, post []int          // by that number, in the dominator tree
}

// reached reports whether id is reachable from the start.
func (d *domTree) reached(id string) bool { _, ok := d.num[id]; return ok }

// dominates reports whether every path from the start to b goes through a
// (a step dominates itself); false when either is unreachable.
func (d *domTree) dominates(a, b string) bool {
	i, ok := d.num[a]
	j, ok2 := d.num[b]
	return ok && ok2 && d.pre[i] <= d.pre[j] && d.post[j] <= d.post[i]
}

// dominators returns the dominator tree of the workflow's edges, nil when
// the graph has no start.
func (v *validator) dominators() *domTree {
	if len(v.nodes) == 0 {
		return nil
	}
	i, ok := v.start()
	if !ok {
		return nil
	}
	succ := map[string][]string{}
	pred := map[string][]string{}
	for _, e := range v.w.Edges {
		if v.byID[e.From] == nil || v.byID[e.To] == nil || v.neverTaken(e) {
			continue
		}
		succ[e.From] = append(succ[e.From], e.To)
		pred[e.To] = append(pred[e.To], e.From)
	}
	// The reverse postorder of a depth-first walk from the start (an
	// explicit stack: a workflow may be thousands of steps deep).
	var postorder []string
	visited := map[string]bool{}
	type frame struct {
		id   string
		next int
	}
	stack := []frame{{id: v.nodes[i].ID}}
	visited[v.nodes[i].ID] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(succ[top.id]) {
			s := succ[top.id][top.next]
			top.next++
			if !visited[s] {
				visited[s] = true
				stack = append(stack, frame{id: s})
			}
			continue
		}
		postorder = append(postorder, top.id)
		stack = stack[:len(stack)-1]
	}
	n := len(postorder)
	d := &domTree{num: make(map[string]int, n)}
	order := make([]string, n)
	for k, id := range postorder {
		order[n-1-k] = id
		d.num[id] = n - 1 - k
	}
	idom := make([]int, n)
	for k := range idom {
		idom[k] = -1
	}
	idom[0] = 0
	intersect := func(a, b int) int {
		for a != b {
			for a > b {
				a = idom[a]
			}
			for b > a {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for b := 1; b < n; b++ {
			nd := -1
			for _, p := range pred[order[b]] {
				pi, ok := d.num[p]
				if !ok || idom[pi] < 0 {
					continue // unreachable, or not processed yet
				}
				if nd < 0 {
					nd = pi
				} else {
					nd = intersect(pi, nd)
				}
			}
			if nd >= 0 && idom[b] != nd {
				idom[b] = nd
				changed = true
			}
		}
	}
	// Number the tree in pre- and postorder.
	children := make([][]int, n)
	for b := 1; b < n; b++ {
		children[idom[b]] = append(children[idom[b]], b)
	}
	d.pre, d.post = make([]int, n), make([]int, n)
	clock := 0
	type walk struct{ node, next int }
	ws := []walk{{node: 0}}
	d.pre[0] = clock
	clock++
	for len(ws) > 0 {
		top := &ws[len(ws)-1]
		if top.next < len(children[top.node]) {
			c := children[top.node][top.next]
			top.next++
			d.pre[c] = clock
			clock++
			ws = append(ws, walk{node: c})
			continue
		}
		d.post[top.node] = clock
		clock++
		ws = ws[:len(ws)-1]
	}
	return d
}

// neverTaken reports whether e is the step-order 'default' edge of a step
// that never takes 'default': a switch whose default action is renamed, an
// ask step (it takes its choices). No path goes through it: the checks of
// what runs on every path (dominators, outputsOnEveryPath) leave it out.
func (v *validator) neverTaken(e workflow.Edge) bool {
	spec := v.specs[e.From]
	if e.ActionOrDefault() != "default" || spec == nil || spec.StepActions == nil {
		return false
	}
	actions := spec.StepActions(withAlsoKeys(spec, v.byID[e.From].Params))
	return actions != nil && !slices.Contains(actions, "default")
}

// parallelOrder checks the after lists, and that a parallel workflow has
// no loop (its steps run once each).
func (v *validator) parallelOrder() {
	for _, n := range v.nodes {
		raw, ok := v.ownControl(n, stepkeys.After)
		if !ok {
			continue
		}
		after, err := stepkeys.ParseAfter(raw)
		if err != nil {
			continue // the control check reports it
		}
		for _, a := range after {
			switch {
			case v.byID[a] == nil:
				ids := make([]string, 0, len(v.nodes))
				for _, o := range v.nodes {
					ids = append(ids, o.ID)
				}
				v.add(layerDataFlow, Diagnostic{Message: fmt.Sprintf("Step '%s': 'after' names '%s', which is not a step", n.ID, a),
					NodeID: n.ID, Param: stepkeys.After, Line: v.line(n.ID), Hint: "Steps: " + strings.Join(ids, ", ") + "."})
			case a == n.ID || v.index[a] > v.index[n.ID]:
				v.add(layerDataFlow, Diagnostic{Message: fmt.Sprintf("Step '%s': 'after' names '%s', which comes later in the file", n.ID, a),
					NodeID: n.ID, Param: stepkeys.After, Line: v.line(n.ID), Hint: fmt.Sprintf("Move step '%s' above '%s'.", a, n.ID)})
			}
		}
		if v.w.Parallel == 0 {
			v.add(layerDataFlow, Diagnostic{Severity: SeverityWarning,
				Message: fmt.Sprintf("Step '%s' sets 'after', which only matters when steps run in parallel: this workflow runs its steps in order", n.ID),
				NodeID:  n.ID, Param: stepkeys.After, Line: v.line(n.ID),
				Hint: "Write '- parallel: true' right under '## Steps' to run independent steps at once, or remove 'after'."})
		}
	}
	if v.w.Parallel == 0 {
		return
	}
	if loop := v.loop(); len(loop) > 0 {
		v.add(layerDataFlow, Diagnostic{
			Message: fmt.Sprintf("This workflow runs steps in parallel, but its edges loop (%s): in a parallel workflow each step runs at most once", strings.Join(loop, " → ")),
			NodeID:  loop[0], Line: v.line(loop[0]),
			Hint: "Remove '- parallel' under '## Steps' to keep the loop, or replace the loop by retries ('- retries: 3').",
		})
	}
}

// loop returns one cycle of the edge graph, or nil.
func (v *validator) loop() []string {
	succ := map[string][]string{}
	for _, e := range v.w.Edges {
		succ[e.From] = append(succ[e.From], e.To)
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(id string) bool
	visit = func(id string) bool {
		color[id] = grey
		stack = append(stack, id)
		for _, s := range succ[id] {
			switch color[s] {
			case grey:
				i := slices.Index(stack, s)
				found = append(slices.Clone(stack[i:]), s)
				return true
			case white:
				if visit(s) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return false
	}
	for _, n := range v.nodes {
		if color[n.ID] == white && visit(n.ID) {
			return found
		}
	}
	return nil
}
