package workflow

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
)

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
		return nil, &ParseError{Path: abs, Message: "Unsupported workflow file: " + path + "\nWorkflow files end in .pflow.md (markdown) or .json (JSON IR).", Suggestion: "Rename the file to end in .pflow.md, or pass a saved workflow by name.",
			Fixes: []pferr.Fix{{Text: "{do} to see the saved workflows.", Do: pferr.ListWorkflows()}}}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &ParseError{Path: abs, Message: "Workflow file not found: " + path, Suggestion: "Check the path, or pass a saved workflow by name.", err: err,
				Fixes: []pferr.Fix{{Text: "{do} to see the saved workflows.", Do: pferr.ListWorkflows()}}}
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
	return parseData(path, src, isJSON)
}

func parseData(path string, src []byte, isJSON bool) (*Workflow, error) {
	if isJSON {
		return ParseJSON(src, path)
	}
	return ParseMarkdown(src, path)
}

// ParseFileShared is ParseFile for callers that do not modify the
// Workflow: while the file is unchanged, a long-lived process (pflow mcp
// serve, running the same workflow file again and again) parses it once.
// The Workflow is shared: it must not be modified. Errors are ParseFile's.
func ParseFileShared(path string) (*Workflow, error) {
	lower := strings.ToLower(path)
	if isJSON := strings.HasSuffix(lower, ".json"); isJSON || strings.HasSuffix(lower, ".pflow.md") {
		w, err := sharedFiles.Load(path, func(src []byte) (*Workflow, error) { return parseData(path, src, isJSON) })
		if err == nil {
			return w, nil
		}
	}
	return ParseFile(path)
}

var sharedFiles fsutil.Memo[*Workflow]
