// Package trace writes one JSON trace file per run: every value redacted
// (internal/redact) and kept within the caps.
package trace

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// FormatVersion is the trace file format. 1.3.0 added the caps: "truncated",
// "limits", "nodes_omitted" and the markers (see Truncated).
const FormatVersion = "1.3.0"

// File is the JSON document of a trace file, for readers (Write streams it
// field by field in this order).
type File struct {
	FormatVersion string  `json:"format_version"`
	ExecutionID   string  `json:"execution_id"`
	WorkflowName  string  `json:"workflow_name"`
	WorkflowFile  string  `json:"workflow_file,omitempty"`
	StartTime     string  `json:"start_time"`
	EndTime       string  `json:"end_time"`
	DurationMS    float64 `json:"duration_ms"`
	FinalStatus   string  `json:"final_status"`
	Interrupted   bool    `json:"interrupted,omitempty"`
	// Truncated is true when a cap cut something: look for strings
	// starting with "<truncated" (Truncated) or for NodesOmitted.
	Truncated bool `json:"truncated"`
	// Limits are the caps the trace was written with (max_depth,
	// max_string_bytes, max_items, max_nodes, max_file_bytes).
	Limits        map[string]int64 `json:"limits"`
	Inputs        any              `json:"inputs"`
	NodesExecuted int              `json:"nodes_executed"`
	NodesFailed   int              `json:"nodes_failed"`
	Nodes         []Node           `json:"nodes"`
	NodesOmitted  int              `json:"nodes_omitted,omitempty"`
	Outputs       any              `json:"outputs,omitempty"`
	Failure       any              `json:"failure,omitempty"`
	Warnings      any              `json:"warnings,omitempty"`
	LLMCalls      any              `json:"llm_calls,omitempty"`
}

// Node is one step in a trace.
type Node struct {
	NodeID     string  `json:"node_id"`
	NodeType   string  `json:"node_type"`
	Depth      int     `json:"depth,omitempty"`
	Status     string  `json:"status"`
	Success    bool    `json:"success"`
	Action     string  `json:"action,omitempty"`
	Attempts   int     `json:"attempts,omitempty"`
	StartTime  string  `json:"timestamp,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Params     any     `json:"params,omitempty"`
	Outputs    any     `json:"outputs,omitempty"`
	Error      string  `json:"error,omitempty"`
	Batch      any     `json:"batch,omitempty"`
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9-]+`) })

// FilePattern matches the names FileName gives (path.Match syntax), for
// listing and pruning the trace directory.
const FilePattern = "workflow-trace-*.json"

// FileName returns a unique trace file name for a workflow name.
func FileName(name string, t time.Time) string {
	safe := unsafeChars().ReplaceAllString(name, "-")
	if len(safe) > 30 {
		safe = safe[:30]
	}
	safe = strings.Trim(safe, "-")
	var b [4]byte
	rand.Read(b[:])
	suffix := t.Format("20060102-150405.000")
	suffix = strings.Replace(suffix, ".", "-", 1) + "-" + hex.EncodeToString(b[:])
	if safe == "" || safe == "workflow" {
		return "workflow-trace-" + suffix + ".json"
	}
	return "workflow-trace-" + safe + "-" + suffix + ".json"
}

// Write writes the trace of a run into dir as a new file and returns its
// path. Values are redacted and kept within the caps (MaxDepth, MaxString,
// MaxItems, MaxNodes), and the file never exceeds MaxFileBytes, however
// large or deep the run's values are. It streams the file in two passes —
// the first only counts, so that the size budget goes to the values that
// need it (max-min fair: small values are kept whole, the largest are cut
// first) — so memory stays bounded by the caps, not by the values.
func Write(dir, name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, red *redact.Redactor) (string, error) {
	return write(dir, name, w, inputs, res, red, defaultLimits)
}

func write(dir, name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, red *redact.Redactor, lim limits) (string, error) {
	path := filepath.Join(dir, FileName(name, res.Started))
	if err := writeFile(path, name, w, inputs, res, red, lim); err != nil {
		return "", err
	}
	return path, nil
}

// WriteFile is Write to a path of the caller's choosing (a name from
// FileName in the traces directory): a long-lived process answers with the
// path and writes the trace afterwards.
func WriteFile(path, name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, red *redact.Redactor) error {
	return writeFile(path, name, w, inputs, res, red, defaultLimits)
}

func writeFile(path, name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, red *redact.Redactor, lim limits) error {
	d := newDoc(name, w, inputs, res, lim)
	m := &encoder{red: red, lim: lim, end: math.MaxInt64}
	d.emit(m, nil, false)
	d.plan(m.n, m.cut)
	// A trace is written once and never replaced: atomic (a reader or a
	// killed pflow sees all of it or none), not flushed with fsync, whose
	// journal commit slowed the next run of a busy pflow mcp serve — a
	// power loss may lose the newest trace, as it may the newest events
	// of a run's record.
	write := func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 64<<10)
		e := &encoder{w: bw, red: red, lim: lim, end: math.MaxInt64}
		d.emit(e, d.alloc, d.truncated)
		if e.err != nil {
			return e.err
		}
		return bw.Flush()
	}
	// In a spare file when there is one (see spare.go), else made anew.
	if handled, err := createInSpare(path, write); handled {
		return err
	}
	return fsutil.CreateFunc(path, 0o600, write)
}

// doc is a trace to write: the run's fields, and its values by reference
// (nothing is copied: the encoder redacts and cuts as it writes).
type doc struct {
	lim                       limits
	id, name, file            string
	start, end, status        string
	durationMS                float64
	interrupted               bool
	inputs                    map[string]any
	nodes                     []docNode
	executed, failed, omitted int
	outputs, failure          any
	warnings, llmCalls        any
	// Filled by the measuring pass and plan.
	wrote, need []int64
	alloc       []int64
	truncated   bool
}

type docNode struct {
	id, typ, status, action, started, err string
	depth, attempts                       int
	durationMS                            float64
	params, outputs                       map[string]any
	batch                                 any
	logs                                  []any
}

func newDoc(name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, lim limits) *doc {
	d := &doc{lim: lim, id: newID(), name: name, status: res.Status, interrupted: res.Interrupted,
		start: res.Started.Format(time.RFC3339Nano), end: res.Started.Add(res.Duration).Format(time.RFC3339Nano),
		durationMS: ms(res.Duration), inputs: inputs}
	if w != nil && w.Source != nil {
		d.file = w.Source.Path
	}
	var add func(steps []*runtime.Step, depth int)
	add = func(steps []*runtime.Step, depth int) {
		for _, s := range steps {
			if s.Ran() {
				d.executed++
			}
			if s.Status == runtime.StatusFailed {
				d.failed++
			}
			if len(d.nodes) >= lim.nodes {
				d.omitted++
			} else {
				n := docNode{id: s.NodeID, typ: s.Type, depth: depth, status: s.Status, action: s.Action,
					attempts: s.Attempts, durationMS: ms(s.Duration), err: s.Error, outputs: s.Outputs}
				for _, l := range s.Logs {
					n.logs = append(n.logs, l)
				}
				if !s.Started.IsZero() {
					n.started = s.Started.Format(time.RFC3339Nano)
				}
				if s.Params != nil {
					n.params = s.Params
				}
				if s.Batch != nil {
					n.batch = s.Batch.Value(len(s.Batch.Errors), true)
				}
				d.nodes = append(d.nodes, n)
			}
			add(s.Children, depth+1)
		}
	}
	add(res.Steps, 0)
	if len(res.Outputs) > 0 {
		d.outputs = res.Outputs
	}
	if f := res.Failure; f != nil {
		m := map[string]any{"category": f.Category, "message": f.Message}
		if f.NodeID != "" {
			m["node_id"] = f.NodeID
		}
		if f.NodeType != "" {
			m["node_type"] = f.NodeType
		}
		if f.Line != 0 {
			m["line"] = int64(f.Line)
		}
		if len(f.Details) > 0 {
			m["details"] = f.Details
		}
		d.failure = m
	}
	if len(res.Warnings) > 0 {
		ws := make([]any, len(res.Warnings))
		for i, w := range res.Warnings {
			m := map[string]any{"type": w.Type, "message": w.Message}
			if w.NodeID != "" {
				m["node_id"] = w.NodeID
			}
			ws[i] = m
		}
		d.warnings = ws
	}
	if len(res.LLMCalls) > 0 {
		d.llmCalls = res.LLMCalls[:min(len(res.LLMCalls), 100)]
	}
	return d
}

// measureCap bounds the counting pass: once it has counted this much of the
// values, the rest are counted only up to an equal share of the file (a
// value that needs more counts as needing the whole file).
func (d *doc) measureCap() int64 { return 4 * d.lim.file }

// slots is how many values emit writes with a budget.
func (d *doc) slots() int {
	n := 1 // inputs
	for _, nd := range d.nodes {
		for _, has := range []bool{nd.params != nil, nd.outputs != nil, nd.err != "", nd.batch != nil} {
			if has {
				n++
			}
		}
	}
	for _, v := range []any{d.outputs, d.failure, d.warnings, d.llmCalls} {
		if v != nil {
			n++
		}
	}
	return n
}

// emit writes the document. With alloc nil it only counts: every value gets
// the whole file as its budget, and d.wrote and d.need record what each
// wrote and needed. Otherwise value i gets alloc[i] bytes.
func (d *doc) emit(e *encoder, alloc []int64, truncated bool) {
	measuring := alloc == nil
	var measured, share int64
	if measuring {
		share = max(d.lim.file/int64(d.slots()), 4096)
	}
	i := 0
	slot := func(v any) {
		defer func() { i++ }()
		if !measuring {
			e.slot(v, alloc[i])
			return
		}
		budget := d.lim.file
		if measured >= d.measureCap() {
			budget = share
		}
		wrote, need := e.slot(v, budget)
		if need > budget {
			need = d.lim.file // counted only in part: it needs more than its share
		}
		measured += wrote
		d.wrote, d.need = append(d.wrote, wrote), append(d.need, need)
	}
	e.open('{')
	e.strField("format_version", FormatVersion)
	e.strField("execution_id", d.id)
	e.strField("workflow_name", d.name)
	if d.file != "" {
		e.strField("workflow_file", d.file)
	}
	e.strField("start_time", d.start)
	e.strField("end_time", d.end)
	e.floatField("duration_ms", d.durationMS)
	e.strField("final_status", d.status)
	if d.interrupted {
		e.boolField("interrupted", true)
	}
	// Counted as "false", one byte longer than "true".
	e.boolField("truncated", truncated)
	e.key("limits")
	e.open('{')
	e.intField("max_depth", int64(d.lim.depth))
	e.intField("max_string_bytes", int64(d.lim.str))
	e.intField("max_items", int64(d.lim.items))
	e.intField("max_nodes", int64(d.lim.nodes))
	e.intField("max_file_bytes", d.lim.file)
	e.close('}')
	e.key("inputs")
	slot(d.inputs)
	e.intField("nodes_executed", int64(d.executed))
	e.intField("nodes_failed", int64(d.failed))
	e.key("nodes")
	e.open('[')
	for _, n := range d.nodes {
		e.sep()
		e.open('{')
		e.strField("node_id", n.id)
		e.strField("node_type", n.typ)
		if n.depth != 0 {
			e.intField("depth", int64(n.depth))
		}
		e.strField("status", n.status)
		e.boolField("success", n.status == runtime.StatusCompleted)
		if n.action != "" {
			e.strField("action", n.action)
		}
		if n.attempts != 0 {
			e.intField("attempts", int64(n.attempts))
		}
		if n.started != "" {
			e.strField("timestamp", n.started)
		}
		e.floatField("duration_ms", n.durationMS)
		if n.params != nil {
			e.key("params")
			slot(n.params)
		}
		if n.outputs != nil {
			e.key("outputs")
			slot(n.outputs)
		}
		if n.err != "" {
			e.key("error")
			slot(n.err)
		}
		if n.logs != nil {
			e.key("logs")
			slot(n.logs)
		}
		if n.batch != nil {
			e.key("batch")
			slot(n.batch)
		}
		e.close('}')
	}
	e.close(']')
	if d.omitted > 0 {
		e.intField("nodes_omitted", int64(d.omitted))
	}
	for _, f := range []struct {
		k string
		v any
	}{{"outputs", d.outputs}, {"failure", d.failure}, {"warnings", d.warnings}, {"llm_calls", d.llmCalls}} {
		if f.v != nil {
			e.key(f.k)
			slot(f.v)
		}
	}
	e.close('}')
	e.writeString("\n")
}

// plan shares the file's size among the values after the counting pass
// (total: what it counted; cut: whether a cap cut something). The trace's
// own fields are fixed; the rest is shared max-min fair (fairShares).
func (d *doc) plan(total int64, cut bool) {
	fixed := total
	for _, w := range d.wrote {
		fixed -= w
	}
	d.alloc = fairShares(d.need, d.lim.file-fixed)
	d.truncated = cut || d.omitted > 0
	for i := range d.need {
		if d.alloc[i] < d.need[i] {
			d.truncated = true
		}
	}
}

// fairShares divides avail among needs, max-min fair: every need below an
// equal share of what is left is met whole, the larger ones split the
// rest. A share is never below what a marker takes, so every cut value
// still says what was cut (with the default caps avail always covers that).
func fairShares(need []int64, avail int64) []int64 {
	alloc := make([]int64, len(need))
	idx := make([]int, len(need))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return need[idx[a]] < need[idx[b]] })
	left := max(avail, 0)
	for j, i := range idx {
		share := left / int64(len(idx)-j)
		alloc[i] = min(need[i], max(share, markerMax+2))
		left = max(left-alloc[i], 0)
	}
	return alloc
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
