// Package validate runs pflow's static checks on a workflow before it runs
// (as in the Python pflow): structure, stdin, data flow, templates,
// node types, output sources and params. Every problem is reported at once,
// each with where it is (node, param, line) and how to fix it.
package validate

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Severity of a diagnostic.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one finding.
type Diagnostic struct {
	Severity Severity
	// Message is the full text, including multi-line blocks such as
	// "Available outputs from 'fetch':".
	Message string
	// NodeID is the step the finding is about ("" when not about one step).
	NodeID string
	Param  string
	// Line is the line in the .pflow.md file, 0 when unknown.
	Line int
	// Hint says how to fix it (one or more lines), in words every reader
	// understands (no pflow command, no tool call).
	Hint string
	// Fixes are fixes as data, worded for each reader (pferr.Fix.Say).
	Fixes []pferr.Fix
}

// Advice is the hint and the fixes worded for r, one per line.
func (d Diagnostic) Advice(r pferr.Reader) string {
	return strings.TrimSpace(d.Hint + "\n" + pferr.Say(d.Fixes, r))
}

// String renders the diagnostic as "Line N: message" plus the hint.
func (d Diagnostic) String() string {
	s := d.Message
	if d.Line > 0 {
		s = fmt.Sprintf("Line %d: %s", d.Line, s)
	}
	if h := d.Advice(pferr.Person); h != "" {
		s += "\n" + h
	}
	return s
}

// Options configures Validate.
type Options struct {
	// Catalog supplies node interfaces. nil skips node-type and interface checks.
	Catalog node.Catalog
	// Provided is the set of params/inputs present at run time (after input
	// preparation). nil means validate-only mode: every declared input counts
	// as provided.
	Provided map[string]any
	// LoadWorkflow resolves a nested workflow (type: workflow, params
	// workflow_name or workflow_ref) so its declared outputs can be checked.
	// nil means nested workflow outputs are typed any.
	LoadWorkflow func(name, ref string) (*workflow.Workflow, error)
}

// Validate runs every layer and returns all errors and warnings together.
// ctx bounds the checks that start a process (a code step's syntax check).
func Validate(ctx context.Context, w *workflow.Workflow, opts Options) (errs, warnings []Diagnostic) {
	if w == nil {
		return []Diagnostic{{Severity: SeverityError, Message: "Workflow is empty", Hint: "Provide a workflow with at least one step under '## Steps'"}}, nil
	}
	return validate(ctx, w, opts).result()
}

// validate runs every layer and returns the validator with its findings.
func validate(ctx context.Context, w *workflow.Workflow, opts Options) *validator {
	v := newValidator(w, opts)
	v.ctx = ctx
	v.ir = w.Source != nil && strings.HasPrefix(strings.TrimSpace(w.Source.Raw), "{")
	v.structure()
	v.stdin()
	v.graph()
	v.nodeTypes()
	v.nodeChecks()
	v.nested()
	v.scanSites()
	v.sinkChecks() // after scanSites: reads refTypes
	v.batches()
	v.inputDefaults()
	v.unusedInputs()
	v.unknownParams()
	v.edgeActions()
	v.conditions()
	v.outputsOnEveryPath()
	v.overwrittenPublish()
	v.failureReads()
	return v
}

// edgeActions refuses an edge on an action its step can never take:
// 'on: {rate_limited: wait}' on a shell step would never fire.
// Steps take default and error; http and MCP steps also take the error
// classes of their failures; other nodes what their spec lists.
func (v *validator) edgeActions() {
	for _, e := range v.w.Edges {
		action := e.ActionOrDefault()
		if action == "default" || action == "error" {
			continue
		}
		n := v.byID[e.From]
		spec := v.specs[e.From]
		if n == nil || spec == nil {
			continue
		}
		allowed := []string{"default", "error"}
		actions := spec.Interface.Actions
		if spec.StepActions != nil { // actions that depend on the step's params (ask: its choices)
			actions = spec.StepActions(withAlsoKeys(spec, n.Params))
		}
		for _, a := range actions {
			if !slices.Contains(allowed, a) {
				allowed = append(allowed, a)
			}
		}
		if n.Type == "http" || strings.HasPrefix(n.Type, "mcp-") {
			for _, c := range node.ErrorClasses() {
				if !slices.Contains(allowed, c) {
					allowed = append(allowed, c)
				}
			}
		}
		if slices.Contains(allowed, action) {
			continue
		}
		msg := fmt.Sprintf("Step '%s' has an edge on action '%s', which %s steps never take", e.From, action, n.Type)
		if near := suggest.Closest(action, allowed, 1, 0.5); len(near) > 0 {
			msg += fmt.Sprintf(" — did you mean '%s'?", near[0])
		}
		v.add(layerDataFlow, Diagnostic{
			Message: msg, NodeID: e.From, Param: "on", Line: v.line(e.From),
			Hint: fmt.Sprintf("Actions of %s: %s. Error classes (rate_limited, auth_failed, not_found, timeout, server_error, network_error, invalid_params, tool_error) come from http and MCP steps; an unrouted class falls back to the error edge.", n.Type, strings.Join(allowed, ", ")),
		})
	}
}

// Layers, in report order.
const (
	layerStructure = iota
	layerStdin
	layerDataFlow
	layerTemplates
	layerTypes
	layerOutputs
	layerParams
	numLayers
)

type validator struct {
	// ir is true for a workflow written as JSON IR: messages then speak of
	// its keys ("inputs", nodes[i].params), not of markdown sections.
	ir   bool
	ctx  context.Context
	w    *workflow.Workflow
	opts Options

	nodes   []*workflow.Node // non-nil nodes, document order
	byID    map[string]*workflow.Node
	index   map[string]int // document index in nodes
	inputs  map[string]*workflow.Input
	specs   map[string]*node.Spec // node id → spec (nil when unknown / workflow)
	unknown map[string]bool       // node ids whose type is unknown

	// graph
	pos map[string]int // topological position
	anc [][]uint64     // anc[i] is the bitset of ancestors of nodes[i]

	// mapped root keys: key → producing node id and output key
	mapped map[string]mappedKey

	// nested workflow exposure: node id → outputs (nil = unknown)
	nestedOut   map[string][]node.Field
	nestedKnown map[string]bool
	outputs     map[string]knownFields // outputsOf, remembered

	usedInputs map[string]bool
	// badBatch holds the steps whose batch is text, not a mapping (step id
	// → the structure message quoting it): the batch's one message says
	// so; its item variable is then no undefined input.
	badBatch map[string]string
	// refTypes holds the inferred type of each template of a top-level
	// string param (refTypeKey(node, param, raw) → type), set by scanSites.
	refTypes map[string]string
	diags    [numLayers][]Diagnostic
	seen     map[string]bool

	// work counts the steps of the template scan (each "${", each reference
	// passed, each byte searched for a '}'); tests check it grows linearly
	// with the number of templates in a string.
	work int
}

type mappedKey struct {
	nodeID, output string
}

func newValidator(w *workflow.Workflow, opts Options) *validator {
	v := &validator{
		w: w, opts: opts,
		byID: map[string]*workflow.Node{}, index: map[string]int{}, inputs: map[string]*workflow.Input{},
		specs: map[string]*node.Spec{}, unknown: map[string]bool{},
		mapped: map[string]mappedKey{}, nestedOut: map[string][]node.Field{}, nestedKnown: map[string]bool{},
		usedInputs: map[string]bool{}, seen: map[string]bool{}, refTypes: map[string]string{}, badBatch: map[string]string{},
	}
	for _, n := range w.Nodes {
		if n == nil || n.ID == "" {
			continue
		}
		if _, dup := v.byID[n.ID]; dup {
			continue
		}
		v.index[n.ID] = len(v.nodes)
		v.nodes = append(v.nodes, n)
		v.byID[n.ID] = n
	}
	for _, in := range w.Inputs {
		if in != nil && in.Name != "" {
			v.inputs[in.Name] = in
		}
	}
	for _, n := range v.nodes {
		if n.Nested() || opts.Catalog == nil {
			continue
		}
		if spec, ok := opts.Catalog.Lookup(n.Type); ok && spec != nil {
			v.specs[n.ID] = spec
		} else {
			v.unknown[n.ID] = true
		}
	}
	for _, id := range value.SortedKeys(w.Mappings) {
		m := w.Mappings[id]
		if m == nil || v.byID[id] == nil {
			continue
		}
		for _, out := range value.SortedKeys(m.OutputMappings) {
			target := m.OutputMappings[out]
			if _, taken := v.mapped[target]; !taken && target != "" {
				v.mapped[target] = mappedKey{nodeID: id, output: out}
			}
		}
	}
	return v
}

func (v *validator) add(layer int, d Diagnostic) {
	if d.Severity == "" {
		d.Severity = SeverityError
	}
	// Point at the param's own line when the step's heading was given,
	// and so do the fixes.
	d.Line = v.paramLine(d.NodeID, d.Param, d.Line)
	d.Fixes = slices.Clone(d.Fixes)
	for i := range d.Fixes {
		f := &d.Fixes[i]
		f.Line = v.paramLine(f.Step, f.Param, f.Line)
	}
	key := string(d.Severity) + "\x00" + d.NodeID + "\x00" + d.Param + "\x00" + d.Message
	if v.seen[key] {
		return
	}
	v.seen[key] = true
	v.diags[layer] = append(v.diags[layer], d)
}

// paramLine is the line of param in step id when line is the step's
// heading (or unknown), else line.
func (v *validator) paramLine(id, param string, line int) int {
	n := v.byID[id]
	if n == nil || param == "" || (line != n.Line && line != 0) {
		return line
	}
	key, _, _ := strings.Cut(param, ".")
	key, _, _ = strings.Cut(key, "[")
	if l := n.KeyLines[key]; l > 0 {
		return l
	}
	return line
}

func (v *validator) result() (errs, warnings []Diagnostic) {
	nerr, nwarn := 0, 0
	for _, layer := range v.diags {
		for _, d := range layer {
			if d.Severity == SeverityWarning {
				nwarn++
			} else {
				nerr++
			}
		}
	}
	if nerr > 0 {
		errs = make([]Diagnostic, 0, nerr)
	}
	if nwarn > 0 {
		warnings = make([]Diagnostic, 0, nwarn)
	}
	for _, layer := range v.diags {
		for _, d := range layer {
			if d.Severity == SeverityWarning {
				warnings = append(warnings, d)
			} else {
				errs = append(errs, d)
			}
		}
	}
	return errs, warnings
}

func (v *validator) line(id string) int {
	if n := v.byID[id]; n != nil {
		return n.Line
	}
	return 0
}

func (v *validator) nodeIDs() []string {
	ids := make([]string, len(v.nodes))
	for i, n := range v.nodes {
		ids[i] = n.ID
	}
	return ids
}

// ---------------------------------------------------------------- layer 1

var (
	nodePathRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nodes\[(\d+)\]`) })
	edgePathRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^edges\[(\d+)\]`) })
)

func (v *validator) structure() {
	for _, e := range v.w.CheckStructure() {
		d := Diagnostic{Message: v.structureMessage(e), Hint: e.Suggestion}
		if m := nodePathRe().FindStringSubmatch(e.Path); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(v.w.Nodes) && v.w.Nodes[i] != nil {
				d.NodeID, d.Line = v.w.Nodes[i].ID, v.w.Nodes[i].Line
				if e.Path == m[0]+".batch" && v.w.Nodes[i].Batch == nil {
					v.badBatch[d.NodeID] = e.Message
				}
			}
		} else if m := edgePathRe().FindStringSubmatch(e.Path); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(v.w.Edges) {
				d.Line = v.line(v.w.Edges[i].From)
			}
		} else if name, ok := strings.CutPrefix(e.Path, "inputs."); ok {
			name, _, _ = strings.Cut(name, ".")
			if in := v.inputs[name]; in != nil {
				d.Line = in.Line
			}
		} else if name, ok := strings.CutPrefix(e.Path, "outputs."); ok {
			name, _, _ = strings.Cut(name, ".")
			if o := v.w.Outputs.Get(name); o != nil {
				d.Line = o.Line
			}
		}
		v.add(layerStructure, d)
	}
}

// ---------------------------------------------------------------- layer 2

func (v *validator) stdin() {
	var names []string
	line := 0
	for _, in := range v.w.Inputs {
		if in != nil && in.Stdin {
			if len(names) == 1 {
				line = in.Line
			}
			names = append(names, in.Name)
		}
	}
	if len(names) > 1 {
		v.add(layerStdin, Diagnostic{
			Message: fmt.Sprintf(`Multiple inputs marked with "stdin": true: %s. Only one input can receive piped stdin.`, strings.Join(names, ", ")),
			Line:    line,
			Hint:    fmt.Sprintf("Keep '- stdin: true' on one input (e.g. '%s') and remove it from the others.", names[0]),
		})
	}
}

// ---------------------------------------------------------------- layer 3: graph

// graph computes the execution order from the edges. Cycles through default
// edges are errors; loops closed by action edges (e.g. a retry branch) are
// allowed and ignored for ordering.
func (v *validator) graph() {
	n := len(v.nodes)
	succ := make([][]int, n)
	type edge struct {
		from, to int
		def      bool
	}
	var edges []edge
	for _, e := range v.w.Edges {
		f, ok1 := v.index[e.From]
		t, ok2 := v.index[e.To]
		if !ok1 || !ok2 {
			continue
		}
		edges = append(edges, edge{f, t, e.ActionOrDefault() == "default"})
		succ[f] = append(succ[f], t)
	}
	// A step whose error action leads back to itself repeats the failing
	// call until the end of time: retries are the bounded way.
	for _, e := range v.w.Edges {
		if e.From == e.To && e.ActionOrDefault() != "default" {
			what := "its own error"
			if e.ActionOrDefault() != "error" {
				what = fmt.Sprintf("its own '%s' failure", e.ActionOrDefault())
			}
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Step '%s' sends %s back to itself: if the failure persists, the run never ends", e.From, what),
				NodeID:  e.From, Param: "on_error", Line: v.line(e.From),
				Hint: "Remove this edge and retry a bounded number of times with '- retries: 3' (and '- retry_wait: 2'), or send the error to a step that handles it.",
			})
		}
	}
	v.failureLoops(n, edges2(v))
	v.unreachable(succ)
	comp := scc(n, succ)
	// Cycles made only of default edges are errors.
	defSucc := make([][]int, n)
	for _, e := range edges {
		if e.def {
			defSucc[e.from] = append(defSucc[e.from], e.to)
		}
	}
	defComp := scc(n, defSucc)
	cyclic := map[int][]string{}
	for _, e := range edges {
		if e.def && defComp[e.from] == defComp[e.to] {
			c := defComp[e.from]
			if cyclic[c] == nil {
				for i, nd := range v.nodes {
					if defComp[i] == c {
						cyclic[c] = append(cyclic[c], nd.ID)
					}
				}
			}
		}
	}
	for _, c := range sortedIntKeys(cyclic) {
		ids := cyclic[c]
		v.add(layerDataFlow, Diagnostic{
			Message: "Data flow error: Circular dependency detected involving nodes: " + strings.Join(ids, ", "),
			NodeID:  ids[0], Line: v.line(ids[0]),
			Hint: "Remove one of the default edges between these steps; to loop back on purpose, use an action edge (e.g. 'retry') from the last step instead.",
		})
	}
	// The ordering graph: drop every edge inside a strongly connected
	// component (loop back-edges); what remains is acyclic.
	dag := make([][]int, n)
	indeg := make([]int, n)
	for _, e := range edges {
		if comp[e.from] == comp[e.to] {
			// Keep default edges inside a loop when the loop is closed by an
			// action edge, so a→b stays ordered in a→b→(retry)→a.
			if !e.def || defComp[e.from] == defComp[e.to] {
				continue
			}
		}
		dag[e.from] = append(dag[e.from], e.to)
		indeg[e.to]++
	}
	// Kahn's algorithm, ties broken by document order.
	v.pos = map[string]int{}
	order := make([]int, 0, n)
	ready := []int{}
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		sort.Ints(ready)
		cur := ready[0]
		ready = ready[1:]
		order = append(order, cur)
		for _, t := range dag[cur] {
			indeg[t]--
			if indeg[t] == 0 {
				ready = append(ready, t)
			}
		}
	}
	// Anything left (should not happen) goes last in document order.
	placed := make([]bool, n)
	for _, i := range order {
		placed[i] = true
	}
	for i := 0; i < n; i++ {
		if !placed[i] {
			order = append(order, i)
		}
	}
	words := (n + 63) / 64
	anc := make([][]uint64, n)
	preds := make([][]int, n)
	for f, ts := range dag {
		for _, t := range ts {
			preds[t] = append(preds[t], f)
		}
	}
	for p, i := range order {
		v.pos[v.nodes[i].ID] = p
		a := make([]uint64, words)
		for _, pr := range preds[i] {
			a[pr/64] |= 1 << (pr % 64)
			for k, wd := range anc[pr] {
				a[k] |= wd
			}
		}
		anc[i] = a
	}
	v.anc = anc
}

// runsBefore reports whether step y is an ancestor of step x in the
// execution graph (y always runs before x on the way to x).
func (v *validator) runsBefore(y, x string) bool {
	yi, ok1 := v.index[y]
	xi, ok2 := v.index[x]
	if !ok1 || !ok2 || v.anc == nil {
		return false
	}
	return v.anc[xi][yi/64]&(1<<(yi%64)) != 0
}

// edges2 lists the edges between known steps by document index, with their
// action.
func edges2(v *validator) [][2]int {
	var out [][2]int
	for _, e := range v.w.Edges {
		f, ok1 := v.index[e.From]
		t, ok2 := v.index[e.To]
		if ok1 && ok2 && e.ActionOrDefault() != "default" && f != t {
			out = append(out, [2]int{f, t})
		}
	}
	return out
}

// failureLoops refuses steps that send their failures to each other in a
// ring: while they keep failing, the run never ends (a step's success leaves
// the ring, but nothing bounds the failures).
func (v *validator) failureLoops(n int, failEdges [][2]int) {
	succ := make([][]int, n)
	for _, e := range failEdges {
		succ[e[0]] = append(succ[e[0]], e[1])
	}
	comp := scc(n, succ)
	members := map[int][]string{}
	for _, e := range failEdges {
		if comp[e[0]] == comp[e[1]] && members[comp[e[0]]] == nil {
			for i, nd := range v.nodes {
				if comp[i] == comp[e[0]] {
					members[comp[e[0]]] = append(members[comp[e[0]]], nd.ID)
				}
			}
		}
	}
	for _, c := range sortedIntKeys(members) {
		ids := members[c]
		v.add(layerDataFlow, Diagnostic{
			Message: fmt.Sprintf("Steps %s send their failures to each other in a loop: while they keep failing, the run never ends", quoteList(ids)),
			NodeID:  ids[0], Param: "on_error", Line: v.line(ids[0]),
			Hint: "Retry a bounded number of times on the step itself ('- retries: 3', '- retry_wait: 2s') and send its error to a step that ends the run or reports it, instead of back into the loop.",
		})
	}
}

// start is the document index of the step a run starts at: start_node, or
// the first step. ok is false when start_node names no step (structure
// reports that).
func (v *validator) start() (int, bool) {
	if v.w.StartNode == "" {
		return 0, true
	}
	i, ok := v.index[v.w.StartNode]
	return i, ok
}

// unreachable refuses steps that no edge leads to from the first step: they
// would never run.
func (v *validator) unreachable(succ [][]int) {
	if len(v.nodes) < 2 {
		return
	}
	start, ok := v.start()
	if !ok {
		return
	}
	seen := make([]bool, len(v.nodes))
	stack := []int{start}
	seen[start] = true
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range succ[x] {
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	for i, nd := range v.nodes {
		if seen[i] {
			continue
		}
		hint := fmt.Sprintf("Lead a step to it ('- next: %s' on the step that should run before it), or delete step '%s'.", nd.ID, nd.ID)
		if v.ir {
			hint = fmt.Sprintf(`Add an edge to it, e.g. {"from": "<step before it>", "to": "%s"} in "edges", or remove node '%s'.`, nd.ID, nd.ID)
		}
		for _, e := range v.w.Edges {
			if v.ir || e.To == "" {
				continue
			}
			if j, ok := v.index[e.From]; ok && j == i-1 && e.To != nd.ID && e.ActionOrDefault() == "default" {
				hint = fmt.Sprintf("Step '%s' jumps over it with '- next: %s'; remove that line to run '%s' after '%s', or delete step '%s'.", e.From, e.To, nd.ID, e.From, nd.ID)
			}
		}
		v.add(layerDataFlow, Diagnostic{
			Message: fmt.Sprintf("Step '%s' never runs: no step leads to it from the first step '%s'", nd.ID, v.nodes[start].ID),
			NodeID:  nd.ID, Line: nd.Line,
			Hint: hint,
		})
	}
}

func sortedIntKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// scc returns the strongly connected component id of every vertex (Tarjan).
func scc(n int, succ [][]int) []int {
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	comp := make([]int, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next, ncomp := 0, 0
	var strong func(v int)
	strong = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range succ[v] {
			if index[w] < 0 {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for i := 0; i < n; i++ {
		if index[i] < 0 {
			strong(i)
		}
	}
	// A single vertex with a self-loop is its own cycle; mark it by giving
	// it the same component as itself (already true) — callers compare
	// endpoints, so a self-edge is detected as "same component".
	return comp
}

var (
	unexpectedRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^Additional properties are not allowed \((.*) (?:was|were) unexpected\)$`)
	})
	requiredRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^'([^']*)' is a required property$`) })
	notTypeRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*) is not of type '([^']*)'$`) })
	notMatchRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*) does not match '.*'$`) })
	pathRe     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:nodes\[(\d+)\]|edges\[(\d+)\]|(inputs|outputs)\.([^.]+))(?:\.(.*))?$`)
	})
)

// structureMessage words a schema finding in the workflow's own terms: the
// step, input, output or edge it is about and the key, instead of an IR
// path and JSON-Schema phrasing ("Additional properties are not allowed
// ('concurrency' was unexpected)" at nodes[0].batch becomes "Step 'a',
// batch block: unknown key 'concurrency'").
func (v *validator) structureMessage(e workflow.StructureError) string {
	what := e.Message
	if m := unexpectedRe().FindStringSubmatch(what); m != nil {
		if strings.Contains(m[1], ",") {
			what = "unknown keys " + m[1]
		} else {
			what = "unknown key " + m[1]
		}
	} else if m := requiredRe().FindStringSubmatch(what); m != nil {
		what = fmt.Sprintf("the required key '%s' is missing", m[1])
	} else if m := notTypeRe().FindStringSubmatch(what); m != nil && m[2] == "object" {
		what = fmt.Sprintf("expects a mapping (an object of 'key: value' pairs), got %s", m[1])
	} else if m := notTypeRe().FindStringSubmatch(what); m != nil {
		what = fmt.Sprintf("expects type '%s', got %s", m[2], m[1])
	} else if m := notMatchRe().FindStringSubmatch(what); m != nil {
		what = fmt.Sprintf("got %s, which is not in the expected form", m[1])
	}
	return v.structureWhere(e.Path) + ": " + what
}

// structureWhere names what an IR path points at.
func (v *validator) structureWhere(path string) string {
	m := pathRe().FindStringSubmatch(path)
	if m == nil {
		if path == "root" || path == "" {
			return "The workflow"
		}
		return "Workflow key '" + path + "'"
	}
	rest := m[5]
	var where string
	switch {
	case m[1] != "":
		i, _ := strconv.Atoi(m[1])
		where = fmt.Sprintf("Step %d", i+1)
		if i < len(v.w.Nodes) && v.w.Nodes[i] != nil && v.w.Nodes[i].ID != "" {
			where = fmt.Sprintf("Step '%s'", v.w.Nodes[i].ID)
		}
		switch {
		case rest == "batch":
			return where + ", batch block"
		case strings.HasPrefix(rest, "batch."):
			return where + ", batch key '" + strings.TrimPrefix(rest, "batch.") + "'"
		case strings.HasPrefix(rest, "params."):
			return where + ", param '" + strings.TrimPrefix(rest, "params.") + "'"
		}
	case m[2] != "":
		i, _ := strconv.Atoi(m[2])
		// JSON IR's own words: the index into "edges" and the ends it has.
		where = fmt.Sprintf("edges[%d]", i)
		if i < len(v.w.Edges) {
			from, to := v.w.Edges[i].From, v.w.Edges[i].To
			if from == "" {
				from = "?"
			}
			if to == "" {
				to = "?"
			}
			where = fmt.Sprintf("edges[%d] (%s → %s)", i, from, to)
		}
	default:
		where = fmt.Sprintf("%s '%s'", strings.ToUpper(m[3][:1])+m[3][1:len(m[3])-1], m[4])
	}
	if rest != "" {
		where += ", key '" + rest + "'"
	}
	return where
}
