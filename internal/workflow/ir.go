package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// IRVersion is the version stamped on every normalized workflow.
const IRVersion = "0.1.0"

// Workflow is the intermediate representation everything downstream consumes.
type Workflow struct {
	IRVersion string `json:"ir_version"`
	// Inputs and Outputs keep declaration order; they marshal as JSON objects.
	Inputs  Inputs  `json:"inputs,omitempty"`
	Nodes   []*Node `json:"nodes"`
	Edges   []Edge  `json:"edges"`
	Outputs Outputs `json:"outputs,omitempty"`
	// Parallel, when above 0, runs steps that do not depend on each other
	// at the same time, at most Parallel at once (see docs/workflow-format.md,
	// "Parallel steps"). 0 runs them one at a time, in order.
	Parallel int `json:"parallel,omitempty"`
	// StartNode names the first node; empty means Nodes[0].
	StartNode string `json:"start_node,omitempty"`
	// Mappings are proxy mappings per node id (see docs/decisions.md, "Workflow
	// formats").
	Mappings map[string]*Mapping `json:"mappings,omitempty"`
	// EnableNamespacing nil means true.
	EnableNamespacing      *bool  `json:"enable_namespacing,omitempty"`
	TemplateResolutionMode string `json:"template_resolution_mode,omitempty"`

	// Source describes where the workflow came from. Never serialized.
	Source *Source `json:"-"`

	// decodeErrs are schema violations met while decoding (unknown
	// properties, wrong types); CheckStructure reports them.
	decodeErrs []StructureError
}

// Source is what the parser knows about a workflow beyond its IR.
type Source struct {
	// Path is the absolute file path, empty for in-memory workflows.
	Path        string
	Title       string
	Description string
	// Metadata is the YAML frontmatter (library metadata), if any.
	Metadata map[string]any
	// Raw is the original file text.
	Raw string
	// Warnings are non-fatal parser findings, e.g. "Line 4: '## Step' looks like a typo".
	Warnings []string
}

// Input declares one workflow input.
type Input struct {
	Name        string `json:"-"`
	Description string `json:"description,omitempty"`
	// Required nil means true.
	Required *bool  `json:"required,omitempty"`
	Type     string `json:"type,omitempty"`
	Default  any    `json:"default,omitempty"`
	Stdin    bool   `json:"stdin,omitempty"`
	// Env names the process environment variable that fills the input
	// when it is not given (docs/decisions.md, "Inputs come from explicit
	// sources": never an arbitrary variable
	// that happens to share the input's name).
	Env string `json:"env,omitempty"`
	// Line is the 1-based line of the declaration (0 when unknown).
	Line int `json:"-"`
}

// IsRequired reports whether the input must be provided (default true).
func (in *Input) IsRequired() bool { return in.Required == nil || *in.Required }

// Output declares one workflow output.
type Output struct {
	Name        string `json:"-"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	Source      string `json:"source,omitempty"`
	Line        int    `json:"-"`
}

// SourceTemplate is the output's source as a template: a bare path
// ("node.key", "$node.key") becomes "${node.key}"; text with templates is
// kept. Empty when the output has no source (it reads the root key of its
// name). The engine and validation both read a source through it.
func (o *Output) SourceTemplate() string {
	src := strings.TrimSpace(o.Source)
	if src == "" || strings.Contains(src, "${") {
		return src
	}
	return "${" + strings.TrimPrefix(src, "$") + "}"
}

// Node is one step.
type Node struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Purpose string         `json:"purpose,omitempty"`
	Params  map[string]any `json:"params,omitempty"`
	Batch   *Batch         `json:"batch,omitempty"`
	// SourceLines maps a param filled from a raw code block to the file line of
	// the block's first content line (used to map code errors back to the file).
	SourceLines map[string]int `json:"_source_lines,omitempty"`
	// Line is the 1-based line of the step heading (0 when unknown).
	Line int `json:"-"`
	// KeyLines maps each key written in a .pflow.md step (params, type,
	// batch, on_error, …) to the line it is on, so a problem with one
	// param points at that line (nil for JSON IR).
	KeyLines map[string]int `json:"-"`
}

// DefaultParallel is the limit of a workflow that writes `parallel: true`.
const DefaultParallel = 8

// MaxParallel is the highest limit a workflow may set.
const MaxParallel = 100

// ParseParallel reads the workflow-level parallel setting: true (the
// default limit), false (in order), or a limit from 1 to MaxParallel.
func ParseParallel(v any) (int, error) {
	switch t := v.(type) {
	case bool:
		if t {
			return DefaultParallel, nil
		}
		return 0, nil
	case int64:
		if t >= 1 && t <= MaxParallel {
			return int(t), nil
		}
	case float64:
		if t == float64(int(t)) && t >= 1 && t <= MaxParallel {
			return int(t), nil
		}
	}
	return 0, fmt.Errorf("'parallel' takes true, false or how many steps may run at once (1–%d), got %s", MaxParallel, value.Stringify(v))
}

// NestedType is the node type of a step that runs another workflow.
const NestedType = "workflow"

// Nested reports whether the step runs another workflow (type: workflow).
func (n *Node) Nested() bool { return n.Type == NestedType }

// EachRef calls fn with every template reference step n holds: in its
// params (in key order), then in its batch items. A nested step's own
// workflow (workflow_ir) is not looked into: its templates belong to the
// child, which sees only what param_mapping passes it. Input mappings are
// paths, not templates, and are not included.
func (n *Node) EachRef(fn func(template.Ref)) {
	each := func(s string) {
		for _, r := range template.Refs(s) {
			fn(r)
		}
	}
	for _, k := range value.SortedKeys(n.Params) {
		if n.Nested() && k == "workflow_ir" {
			continue
		}
		template.EachString(n.Params[k], each)
	}
	if n.Batch != nil {
		template.EachString(n.Batch.Items, each)
	}
}

// Edge connects two nodes for an action ("" and "default" are the same).
type Edge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Action string `json:"action,omitempty"`
}

// ActionOrDefault returns the edge's action, "default" when empty.
func (e Edge) ActionOrDefault() string {
	if e.Action == "" {
		return "default"
	}
	return e.Action
}

// RoutedSteps are the steps whose failures the workflow handles itself:
// those with an edge on an action other than the default one (on_error, an
// error class such as rate_limited, any other action of 'on'). A step's
// node learns it as node.Request.Routed, so that a failure message
// suggests no way to make the step succeed (ignore_errors) where the
// workflow already routes the failure. Both engines, the local runtime and
// the Temporal worker, take the fact from here. nil when no step is routed.
func (w *Workflow) RoutedSteps() map[string]bool {
	var routed map[string]bool
	for _, ed := range w.Edges {
		if ed.ActionOrDefault() != "default" {
			if routed == nil {
				routed = map[string]bool{}
			}
			routed[ed.From] = true
		}
	}
	return routed
}

// Batch configures running a node once per item.
type Batch struct {
	// Items is a template string like "${list.stdout}" or an inline []any.
	Items any    `json:"items"`
	As    string `json:"as,omitempty"`
	// ErrorHandling is "fail_fast" (default) or "continue".
	ErrorHandling string `json:"error_handling,omitempty"`
	Parallel      bool   `json:"parallel,omitempty"`
	// MaxConcurrent is 1–100; 0 means the default (10).
	MaxConcurrent int `json:"max_concurrent,omitempty"`
	// MaxRetries is total attempts per item, 1–10; 0 means 1.
	MaxRetries int `json:"max_retries,omitempty"`
	// RetryWait is seconds between attempts.
	RetryWait float64 `json:"retry_wait,omitempty"`
}

// Alias returns the item variable name (default "item").
func (b *Batch) Alias() string {
	if b.As == "" {
		return "item"
	}
	return b.As
}

// Mapping renames keys between a node and the shared store.
// InputMappings maps a node param name to a shared-store path it is read from
// (e.g. {"message": "summary"} fills param "message" from ${summary}).
// OutputMappings maps a node output key to the root shared-store key it is also
// published under (e.g. {"search_results": "matches"} makes ${matches} available).
type Mapping struct {
	InputMappings  map[string]string `json:"input_mappings,omitempty"`
	OutputMappings map[string]string `json:"output_mappings,omitempty"`
}

// Namespacing reports whether node outputs are namespaced (default true).
func (w *Workflow) Namespacing() bool { return w.EnableNamespacing == nil || *w.EnableNamespacing }

// Node returns the node with the given id, or nil. Like Inputs.Get and
// Outputs.Get it skips nil entries (a hand-built IR may hold them).
func (w *Workflow) Node(id string) *Node {
	for _, n := range w.Nodes {
		if n != nil && n.ID == id {
			return n
		}
	}
	return nil
}

// Normalize fills defaults the way every consumer expects: ir_version and a
// non-nil edge list.
func (w *Workflow) Normalize() {
	if w.IRVersion == "" {
		w.IRVersion = IRVersion
	}
	if w.Edges == nil {
		w.Edges = []Edge{}
	}
}

// Inputs is an ordered set of input declarations that marshals as a JSON object.
type Inputs []*Input

// Get returns the named input or nil.
func (s Inputs) Get(name string) *Input {
	for _, in := range s {
		if in != nil && in.Name == name {
			return in
		}
	}
	return nil
}

// MarshalJSON writes the inputs as an object in declaration order.
func (s Inputs) MarshalJSON() ([]byte, error) {
	return marshalOrdered(len(s), func(i int) (string, any) { return s[i].Name, s[i] })
}

// UnmarshalJSON reads an object of inputs, keeping document order.
func (s *Inputs) UnmarshalJSON(b []byte) error {
	return unmarshalOrdered(b, func(name string, raw json.RawMessage) error {
		in := &Input{}
		if err := json.Unmarshal(raw, in); err != nil {
			return fmt.Errorf("inputs.%s: %w", name, err)
		}
		in.Name = name
		in.Default = value.Normalize(in.Default)
		*s = append(*s, in)
		return nil
	})
}

// Outputs is an ordered set of output declarations that marshals as a JSON object.
type Outputs []*Output

// Get returns the named output or nil.
func (s Outputs) Get(name string) *Output {
	for _, o := range s {
		if o != nil && o.Name == name {
			return o
		}
	}
	return nil
}

// MarshalJSON writes the outputs as an object in declaration order.
func (s Outputs) MarshalJSON() ([]byte, error) {
	return marshalOrdered(len(s), func(i int) (string, any) { return s[i].Name, s[i] })
}

// UnmarshalJSON reads an object of outputs, keeping document order.
func (s *Outputs) UnmarshalJSON(b []byte) error {
	return unmarshalOrdered(b, func(name string, raw json.RawMessage) error {
		o := &Output{}
		if err := json.Unmarshal(raw, o); err != nil {
			return fmt.Errorf("outputs.%s: %w", name, err)
		}
		o.Name = name
		*s = append(*s, o)
		return nil
	})
}

func marshalOrdered(n int, at func(int) (string, any)) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i := 0; i < n; i++ {
		k, v := at(i)
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := value.MarshalJSON(v)
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func unmarshalOrdered(b []byte, each func(string, json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("expected an object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := each(kt.(string), raw); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}
