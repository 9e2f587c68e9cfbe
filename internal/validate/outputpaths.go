package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/template"
)

// maxAbsentPaths is how many paths without the step a warning names.
const maxAbsentPaths = 3

// outputsOnEveryPath warns about an output whose source reads a step that
// does not run on every path through the workflow (a step reached only
// through on_error or 'on', or one after such a branch): on a path without
// it the run ends with the output absent. The warning names the output,
// the step and the paths, and the fix: source the output from a step that
// runs on every path, or accept that it is absent there.
func (v *validator) outputsOnEveryPath() {
	if len(v.nodes) < 2 || len(v.w.Edges) == 0 || len(v.w.Outputs) == 0 {
		return
	}
	start, ok := v.start()
	if !ok {
		return
	}
	type arc struct {
		to     int
		action string
	}
	n := len(v.nodes)
	succ := make([][]arc, n)
	ends := make([]bool, n) // a run may end after the step: no default successor
	for i := range ends {
		ends[i] = true
	}
	for _, e := range v.w.Edges {
		f, ok1 := v.index[e.From]
		t, ok2 := v.index[e.To]
		if !ok1 || !ok2 {
			continue
		}
		if v.neverTaken(e) { // no run goes this way, nor ends for want of it
			ends[f] = false
			continue
		}
		succ[f] = append(succ[f], arc{t, e.ActionOrDefault()})
		if e.ActionOrDefault() == "default" {
			ends[f] = false
		}
	}
	// pathsWithout are the shortest paths from the start to the ends a run
	// reaches without step skip (each as "a -[error]-> b"), at most
	// maxAbsentPaths; reached says whether skip itself is reachable.
	pathsWithout := func(skip int) (paths []string, reached bool) {
		prev := make([]int, n)
		via := make([]string, n)
		seen := make([]bool, n)
		seen[start] = true
		queue := []int{start}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			if x == skip {
				reached = true
				continue
			}
			if ends[x] && len(paths) < maxAbsentPaths {
				var steps []string
				for y := x; ; y = prev[y] {
					steps = append(steps, v.nodes[y].ID)
					if y == start {
						break
					}
					if via[y] != "default" {
						steps = append(steps, "-["+via[y]+"]->")
					} else {
						steps = append(steps, "->")
					}
				}
				for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
					steps[i], steps[j] = steps[j], steps[i]
				}
				paths = append(paths, strings.Join(steps, " "))
			}
			for _, a := range succ[x] {
				if !seen[a.to] {
					seen[a.to] = true
					prev[a.to], via[a.to] = x, a.action
					queue = append(queue, a.to)
				}
			}
		}
		return paths, reached
	}
	// absent are the paths that end without step i (nil when every run
	// goes through it, or it is unreachable: its own error says so), for
	// the steps outputs read.
	memo := map[int][]string{}
	absent := func(i int) []string {
		paths, ok := memo[i]
		if !ok {
			var reached bool
			paths, reached = pathsWithout(i)
			if !reached && i != start {
				paths = nil
			}
			memo[i] = paths
		}
		return paths
	}
	// onEvery are the steps every run that succeeds goes through (they
	// dominate every end a run may reach), in document order: the sources
	// to suggest (worked out once, when an output is warned about).
	var onEvery []string
	onEveryDone := false
	everyPath := func() []string {
		if onEveryDone {
			return onEvery
		}
		onEveryDone = true
		dom := v.dominators()
		if dom == nil {
			return nil
		}
		var endIDs []string
		for i, nd := range v.nodes {
			if ends[i] && dom.reached(nd.ID) {
				endIDs = append(endIDs, nd.ID)
			}
		}
		for _, nd := range v.nodes {
			if dom.reached(nd.ID) && !slices.ContainsFunc(endIDs, func(e string) bool { return !dom.dominates(nd.ID, e) }) {
				onEvery = append(onEvery, nd.ID)
			}
		}
		return onEvery
	}
	for _, o := range v.w.Outputs {
		if o == nil || strings.TrimSpace(o.Source) == "" {
			continue
		}
		src := o.SourceTemplate()
		var steps, paths []string
		for _, p := range template.Parts(src) {
			if p.Ref == nil || slices.Contains(steps, p.Ref.Head) {
				continue
			}
			i, ok := v.index[p.Ref.Head]
			if !ok || absent(i) == nil {
				continue
			}
			steps = append(steps, p.Ref.Head)
			for _, path := range absent(i) {
				if !slices.Contains(paths, path) && len(paths) < maxAbsentPaths {
					paths = append(paths, path)
				}
			}
		}
		if len(steps) == 0 {
			continue
		}
		// the steps those runs end after: where a 'next' may be missing
		var last []string
		for _, p := range paths {
			if l := p[strings.LastIndex(p, " ")+1:]; !slices.Contains(last, l) {
				last = append(last, l)
			}
		}
		msg := fmt.Sprintf("Output '%s' reads step '%s', which does not run on every path: a run that takes %s ends after %s without it, and then '%s' is absent from the result",
			o.Name, steps[0], pathList(paths), orList(last), o.Name)
		if len(steps) > 1 {
			msg = fmt.Sprintf("Output '%s' reads steps %s, which do not run on every path: a run that takes %s ends after %s without them, and then '%s' is absent from the result",
				o.Name, quoteList(steps), pathList(paths), orList(last), o.Name)
		}
		var alt []string
		for _, id := range everyPath() {
			alt = append(alt, "'"+id+"'")
		}
		hint := fmt.Sprintf("If '%s' must always be there, source it from a step that runs on every path", o.Name)
		if len(alt) > 0 {
			hint += " (" + strings.Join(alt, ", ") + ")"
		}
		hint += fmt.Sprintf(", e.g. one where the branches meet again. If '%s' may be absent on those paths, keep it: this is a warning, and the output's description should say when it is set.", o.Name)
		v.add(layerOutputs, Diagnostic{Severity: SeverityWarning, Message: msg, Param: "source", Line: o.Line, Hint: hint})
	}
}

// pathList joins paths for a message: "the path a -> b" or "the paths
// a -> b or a -[error]-> c".
func pathList(paths []string) string {
	if len(paths) == 1 {
		return "the path " + paths[0]
	}
	return "the paths " + strings.Join(paths, " or ")
}

// orList quotes ids as "'a'" or "'a' or 'b'".
func orList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return strings.Join(q, " or ")
}
