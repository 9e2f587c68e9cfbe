package trace

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// FormatVersion is the trace file format.
const FormatVersion = "1.2.0"

// Limits keep traces readable and bounded.
const (
	maxString = 10000
	maxNodes  = 2000
)

// File is the JSON written per run.
type File struct {
	FormatVersion string         `json:"format_version"`
	ExecutionID   string         `json:"execution_id"`
	WorkflowName  string         `json:"workflow_name"`
	WorkflowFile  string         `json:"workflow_file,omitempty"`
	StartTime     string         `json:"start_time"`
	EndTime       string         `json:"end_time"`
	DurationMS    float64        `json:"duration_ms"`
	FinalStatus   string         `json:"final_status"`
	Interrupted   bool           `json:"interrupted,omitempty"`
	Inputs        any            `json:"inputs"`
	NodesExecuted int            `json:"nodes_executed"`
	NodesFailed   int            `json:"nodes_failed"`
	Nodes         []Node         `json:"nodes"`
	Outputs       any            `json:"outputs,omitempty"`
	Failure       any            `json:"failure,omitempty"`
	Warnings      any            `json:"warnings,omitempty"`
	LLMCalls      any            `json:"llm_calls,omitempty"`
	Extra         map[string]any `json:"extra,omitempty"`
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

// Build turns a run result into a trace document, redacted.
func Build(name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, red *Redactor) *File {
	f := &File{
		FormatVersion: FormatVersion,
		ExecutionID:   newID(),
		WorkflowName:  name,
		StartTime:     res.Started.Format(time.RFC3339Nano),
		EndTime:       res.Started.Add(res.Duration).Format(time.RFC3339Nano),
		DurationMS:    ms(res.Duration),
		FinalStatus:   res.Status,
		Interrupted:   res.Interrupted,
		Inputs:        red.value(publicInputs(inputs), maxString),
	}
	if w.Source != nil {
		f.WorkflowFile = w.Source.Path
	}
	var add func(steps []*runtime.Step, depth int)
	add = func(steps []*runtime.Step, depth int) {
		for _, s := range steps {
			if len(f.Nodes) >= maxNodes {
				return
			}
			if s.Status != runtime.StatusNotExecuted {
				f.NodesExecuted++
			}
			if s.Status == runtime.StatusFailed {
				f.NodesFailed++
			}
			n := Node{NodeID: s.NodeID, NodeType: s.Type, Depth: depth, Status: s.Status,
				Success: s.Status == runtime.StatusCompleted, Action: s.Action, Attempts: s.Attempts,
				DurationMS: ms(s.Duration), Error: red.String(s.Error)}
			if !s.Started.IsZero() {
				n.StartTime = s.Started.Format(time.RFC3339Nano)
			}
			if s.Params != nil {
				n.Params = red.value(publicParams(s.Params), maxString)
			}
			if s.Outputs != nil {
				n.Outputs = red.value(s.Outputs, maxString)
			}
			if s.Batch != nil {
				n.Batch = red.value(toAny(s.Batch), maxString)
			}
			f.Nodes = append(f.Nodes, n)
			add(s.Children, depth+1)
		}
	}
	add(res.Steps, 0)
	if len(res.Outputs) > 0 {
		f.Outputs = red.value(res.Outputs, maxString)
	}
	if res.Failure != nil {
		f.Failure = red.value(toAny(res.Failure), maxString)
	}
	if len(res.Warnings) > 0 {
		f.Warnings = red.value(toAny(res.Warnings), maxString)
	}
	if len(res.LLMCalls) > 0 {
		calls := res.LLMCalls
		if len(calls) > 100 {
			calls = calls[:100]
		}
		f.LLMCalls = red.Value(toAny(calls))
	}
	return f
}

// Write builds the trace and writes it atomically into dir, returning its path.
func Write(dir, name string, w *workflow.Workflow, inputs map[string]any, res *runtime.Result, red *Redactor) (string, error) {
	f := Build(name, w, inputs, res, red)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return "", fmt.Errorf("encode trace: %w", err)
	}
	data := buf.Bytes()
	path := filepath.Join(dir, FileName(name, res.Started))
	if err := fsutil.WriteFileAtomic(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

func publicInputs(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if !strings.HasPrefix(k, "__") {
			out[k] = v
		}
	}
	return out
}

func publicParams(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if (strings.HasPrefix(k, "__") && strings.HasSuffix(k, "__")) || (strings.HasPrefix(k, "_") && strings.HasSuffix(k, "_source_line")) {
			continue // injected by the engine, not written by the user
		}
		out[k] = v
	}
	return out
}

func toAny(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	json.Unmarshal(b, &out)
	return out
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
