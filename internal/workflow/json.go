package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// ParseError is one parse failure. Error() renders "Line N: message" (no
// prefix when Line==0), then, when Suggestion != "", a blank line and the
// suggestion — the anchor's format.
type ParseError struct {
	// Path is the file the error is in ("" for in-memory sources).
	Path string
	// Line is 1-based; 0 when the problem has no single line.
	Line       int
	Message    string
	Suggestion string

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
	if e.Suggestion != "" {
		b.WriteString("\n\n")
		b.WriteString(e.Suggestion)
	}
	return b.String()
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
	return &pferr.Error{Kind: kind, Message: msg, Where: where, Hint: e.Suggestion, Err: e}
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
	var top map[string]json.RawMessage
	if json.Unmarshal(src, &top) == nil {
		for _, k := range []string{"inputs", "outputs"} {
			if raw, ok := top[k]; ok {
				order[k] = objectKeys(raw)
			}
		}
	}
	d := &decoder{}
	w := d.workflow(m, order)
	w.decodeErrs = d.errs
	w.Normalize()
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

// objectKeys lists the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil
	}
	var keys []string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := kt.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// ParseFile reads and parses a workflow file, choosing the format by
// extension: ".pflow.md" (any case) is markdown, ".json" is JSON IR. Any
// other ".md" file is refused with a rename suggestion; other extensions are
// refused too. Errors are *ParseError.
func ParseFile(path string) (*Workflow, error) {
	abs := absPath(path)
	lower := strings.ToLower(path)
	isMD := strings.HasSuffix(lower, ".pflow.md")
	isJSON := strings.HasSuffix(lower, ".json")
	switch {
	case isMD, isJSON:
	case strings.HasSuffix(lower, ".md"):
		return nil, &ParseError{Path: abs, Message: "Wrong file extension: " + path + "\nWorkflow files use .pflow.md extension.", Suggestion: "Rename to: " + path[:len(path)-3] + ".pflow.md"}
	default:
		return nil, &ParseError{Path: abs, Message: "Unsupported workflow file: " + path + "\nWorkflow files end in .pflow.md (markdown) or .json (JSON IR).", Suggestion: "Rename the file to end in .pflow.md, or pass a saved workflow by name (pflow workflow list)."}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &ParseError{Path: abs, Message: "Workflow file not found: " + path, Suggestion: "Check the path, or run 'pflow workflow list' to see saved workflows.", err: err}
		case errors.Is(err, fs.ErrPermission):
			return nil, &ParseError{Path: abs, Message: "Cannot read workflow file (permission denied): " + path, Suggestion: "Check the file's permissions.", err: err}
		default:
			var pe *fs.PathError
			msg := err.Error()
			if errors.As(err, &pe) {
				msg = pe.Err.Error()
			}
			return nil, &ParseError{Path: abs, Message: "Cannot read workflow file " + path + ": " + msg, Suggestion: "Check that the path names a readable file.", err: err}
		}
	}
	if isJSON {
		return ParseJSON(src, path)
	}
	return ParseMarkdown(src, path)
}
