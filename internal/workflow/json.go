package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// ParseError is one parse failure. Error() renders "Line N: message" (no
// prefix when Line==0), then, when Suggestion != "", a blank line and the
// suggestion — the Python pflow's format.
type ParseError struct {
	// Path is the file the error is in ("" for in-memory sources).
	Path string
	// Line is 1-based; 0 when the problem has no single line.
	Line       int
	Message    string
	Suggestion string
	// Fixes are fixes that name an action (a command or a tool call),
	// worded for each reader; Error() words them for a person.
	Fixes []pferr.Fix

	err error // underlying cause (e.g. fs.ErrNotExist), for errors.Is
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		b.WriteString("Line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if s := e.advice(pferr.Person); s != "" {
		b.WriteString("\n\n")
		b.WriteString(s)
	}
	return b.String()
}

// advice is the suggestion and the fixes worded for r.
func (e *ParseError) advice(r pferr.Reader) string {
	return strings.TrimSpace(e.Suggestion + "\n" + pferr.Say(e.Fixes, r))
}

// Headline is Error() without the fixes: "Line N: message", then the
// suggestion.
func (e *ParseError) Headline() string {
	c := *e
	c.Fixes = nil
	return c.Error()
}

// Unwrap returns the underlying cause, if any.
func (e *ParseError) Unwrap() error { return e.err }

// PFError converts the parse error into the project's user-facing error:
// kind validation (not_found for a missing file), Where "path:line".
func (e *ParseError) PFError() *pferr.Error {
	kind := pferr.Validation
	if errors.Is(e.err, fs.ErrNotExist) {
		kind = pferr.NotFound
	}
	where := e.Path
	if where != "" && e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	msg := e.Message
	if e.Line > 0 {
		msg = "Line " + strconv.Itoa(e.Line) + ": " + msg
	}
	return &pferr.Error{Kind: kind, Message: msg, Where: where, Hint: e.Suggestion, Fixes: e.Fixes, Err: e}
}

// ParseJSON parses a JSON IR object (the form MCP tools send and .json files
// hold). It fails (with a *ParseError) only when the text is not a JSON
// object; schema problems — unknown properties, wrong types, missing fields —
// are kept and reported by CheckStructure. The result is normalized.
func ParseJSON(src []byte, path string) (*Workflow, error) {
	abs := absPath(path)
	v, err := value.DecodeJSON(src)
	if err != nil {
		line := 0
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			line = offsetLine(src, se.Offset)
		}
		msg := "Invalid JSON: " + err.Error()
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			msg = "Invalid JSON: the document ends early (unclosed object, array or string)"
			line = offsetLine(src, int64(len(src)))
		}
		return nil, &ParseError{Path: abs, Line: line, Message: msg, Suggestion: "Check the JSON syntax (commas, quotes, brackets), or write the workflow as a .pflow.md file.", err: err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ParseError{Path: abs, Line: 1, Message: fmt.Sprintf("Workflow JSON must be an object, got %s.", jsonTypeName(v)), Suggestion: `Use the IR object form: {"ir_version": "0.1.0", "nodes": [{"id": "step", "type": "shell", "params": {"command": "echo hi"}}], "edges": []}`}
	}
	order := map[string][]string{}
	pos := jsonPositions(src)
	for _, k := range []string{"inputs", "outputs"} {
		order[k] = pos.keys[k]
	}
	d := &decoder{}
	w := d.workflow(m, order)
	for i, n := range w.Nodes {
		if i < len(pos.nodes) {
			n.Line = pos.nodes[i]
		}
	}
	for _, in := range w.Inputs {
		in.Line = pos.lines["inputs"][in.Name]
	}
	for _, o := range w.Outputs {
		o.Line = pos.lines["outputs"][o.Name]
	}
	w.decodeErrs = d.errs
	w.Normalize()
	chainEdgeless(w)
	w.Source = &Source{Path: abs, Raw: string(src)}
	return w, nil
}

func absPath(path string) string {
	if path == "" {
		return ""
	}
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// offsetLine converts a byte offset into a 1-based line number.
func offsetLine(src []byte, off int64) int {
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(src[:off], []byte("\n")) + 1
}

// jsonPos records where things are in a JSON IR document: the line of each
// node object, and the key order and lines of the inputs and outputs objects.
type jsonPos struct {
	nodes []int
	keys  map[string][]string
	lines map[string]map[string]int
}

// jsonPositions scans a (valid) JSON IR document for positions. It is
// best-effort: on any surprise it returns what it found so far.
func jsonPositions(src []byte) jsonPos {
	pos := jsonPos{keys: map[string][]string{}, lines: map[string]map[string]int{"inputs": {}, "outputs": {}}}
	dec := json.NewDecoder(bytes.NewReader(src))
	// valueLine is the line where the next value starts (skipping
	// whitespace and separators after the decoder's offset).
	valueLine := func() int {
		off := int(dec.InputOffset())
		for off < len(src) && strings.IndexByte(" \t\r\n,:", src[off]) >= 0 {
			off++
		}
		return offsetLine(src, int64(off))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return pos
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return pos
		}
		key, _ := kt.(string)
		switch key {
		case "nodes":
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return pos
			}
			for dec.More() {
				pos.nodes = append(pos.nodes, valueLine())
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return pos
				}
			}
			if _, err := dec.Token(); err != nil {
				return pos
			}
		case "inputs", "outputs":
			if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
				return pos
			}
			for dec.More() {
				nt, err := dec.Token()
				if err != nil {
					return pos
				}
				name, _ := nt.(string)
				pos.keys[key] = append(pos.keys[key], name)
				pos.lines[key][name] = offsetLine(src, dec.InputOffset())
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return pos
				}
			}
			if _, err := dec.Token(); err != nil {
				return pos
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return pos
			}
		}
	}
	return pos
}

// chainEdgeless gives a JSON IR workflow of several nodes and no edges the
// edges of its node order (a → b → c), as a .pflow.md file's steps run in
// file order: without them only the first node would run.
func chainEdgeless(w *Workflow) {
	if len(w.Edges) > 0 || len(w.Nodes) < 2 {
		return
	}
	if w.StartNode != "" && (w.Nodes[0] == nil || w.Nodes[0].ID != w.StartNode) {
		return // another start: validation says which nodes never run
	}
	for i := 1; i < len(w.Nodes); i++ {
		a, b := w.Nodes[i-1], w.Nodes[i]
		if a == nil || b == nil || a.ID == "" || b.ID == "" {
			return
		}
		w.Edges = append(w.Edges, Edge{From: a.ID, To: b.ID})
	}
}
