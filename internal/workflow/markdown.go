package workflow

// ParseMarkdown parses a .pflow.md document. Placeholder until the parser lands.
func ParseMarkdown(src []byte, path string) (*Workflow, error) {
	return nil, &ParseError{Path: absPath(path), Message: "markdown parser not implemented yet"}
}
