// Package mutate is a mutation harness for workflow validation: it makes
// small, line-based edits to valid workflows (a misspelt key, another tool's
// template syntax, a dropped edge, a moved line, ...) and checks that each
// edit is either refused by validation with a diagnostic that names the
// edited line or step, or runs exactly like the original. A mutant that
// validates and then behaves differently is a survivor: validation vouched
// for something it did not check.
//
// The operators work on the text, one line at a time, so the edited line is
// always known. Check drives one workflow's mutants through an Exec (the
// same validation as `pflow --validate-only`, then runs of the original and
// the mutant with the same inputs) and Report renders the figures.
package mutate

import (
	"regexp"
	"strings"
)

// Kind is a workflow's source format.
type Kind int

const (
	// Markdown is a .pflow.md workflow.
	Markdown Kind = iota
	// JSONIR is a JSON IR workflow, written one node and one edge per line.
	JSONIR
)

// Line is one line of a workflow with what the harness knows about it.
type Line struct {
	N    int // 1-based
	Text string
	// Section is the lower-cased H2 the line is under ("steps", "inputs",
	// "outputs", or another name); Entity the H3 id under it. For JSON IR,
	// Section is "nodes", "edges", "inputs" or "outputs" and Entity the step
	// or input the line is about.
	Section, Entity string
	// Heading is the heading level of a heading line (0 otherwise).
	Heading int
	// InFence is true for the lines inside a fenced block (not its fences);
	// FenceOpen for an opening fence, whose info string is FenceInfo.
	InFence, FenceOpen bool
	FenceInfo          string
	// FenceLang is the first word of the enclosing block's info string.
	FenceLang string
	// Key and Value are set for a top-level `- key: value` param line (Dash
	// true) and for a `key: value` line at the top of a yaml block.
	Key, Value string
	Dash       bool
	// Continued is true when the next line continues this item (indented).
	Continued bool
}

// Source is a workflow's text split into lines.
type Source struct {
	// Name identifies the workflow in mutant ids (a path relative to the
	// repository, with forward slashes).
	Name  string
	Kind  Kind
	Lines []Line
}

var (
	headingRe  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*$`)
	paramRe    = regexp.MustCompile(`^- ([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?$`)
	yamlKeyRe  = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?$`)
	fenceRe    = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})\\s*(.*?)\\s*$")
	jsonIDRe   = regexp.MustCompile(`"id"\s*:\s*"([^"]+)"`)
	jsonFromRe = regexp.MustCompile(`"from"\s*:\s*"([^"]+)"`)
	jsonSecRe  = regexp.MustCompile(`^\s*"(nodes|edges|inputs|outputs)"\s*:`)
	jsonNameRe = regexp.MustCompile(`^\s*"([A-Za-z_][\w-]*)"\s*:\s*\{`)
)

// Parse splits text into lines and records, for each, its section, entity,
// fence and param key. It never fails: text it does not understand is just
// lines no operator fits.
func Parse(name string, text string) *Source {
	s := &Source{Name: name}
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		s.Kind = JSONIR
	}
	raw := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if s.Kind == JSONIR {
		s.Lines = parseJSONLines(raw)
		return s
	}
	var section, entity, fenceMark, fenceLang string
	for i, t := range raw {
		l := Line{N: i + 1, Text: t}
		if fenceMark != "" {
			if m := fenceRe.FindStringSubmatch(t); m != nil && m[2] == "" && m[1][0] == fenceMark[0] && len(m[1]) >= len(fenceMark) {
				fenceMark = ""
			} else {
				l.InFence = true
				l.FenceLang = fenceLang
				if fenceLang == "yaml" {
					if m := yamlKeyRe.FindStringSubmatch(t); m != nil {
						l.Key, l.Value = m[1], m[2]
					}
				}
			}
			l.Section, l.Entity = section, entity
			s.Lines = append(s.Lines, l)
			continue
		}
		if m := fenceRe.FindStringSubmatch(t); m != nil {
			fenceMark = m[1]
			l.FenceOpen, l.FenceInfo = true, m[2]
			fenceLang, _, _ = strings.Cut(m[2], " ")
		} else if m := headingRe.FindStringSubmatch(t); m != nil {
			l.Heading = len(m[1])
			switch l.Heading {
			case 2:
				section, entity = strings.ToLower(m[2]), ""
			case 3:
				entity = m[2]
			}
		} else if m := paramRe.FindStringSubmatch(t); m != nil {
			l.Key, l.Value, l.Dash = m[1], m[2], true
		}
		l.Section, l.Entity = section, entity
		s.Lines = append(s.Lines, l)
	}
	for i := range s.Lines {
		if (s.Lines[i].Key != "") && i+1 < len(s.Lines) {
			next := s.Lines[i+1].Text
			if strings.HasPrefix(next, " ") && strings.TrimSpace(next) != "" {
				s.Lines[i].Continued = true
			}
		}
	}
	return s
}

// parseJSONLines attributes each line of a JSON IR workflow written one
// node, edge, input or output per line.
func parseJSONLines(raw []string) []Line {
	var out []Line
	section := ""
	for i, t := range raw {
		l := Line{N: i + 1, Text: t}
		if m := jsonSecRe.FindStringSubmatch(t); m != nil {
			section = m[1]
		} else if strings.HasPrefix(t, `  "`) && !strings.HasPrefix(t, `    `) {
			section = "" // another top-level field
		}
		l.Section = section
		switch section {
		case "nodes":
			if m := jsonIDRe.FindStringSubmatch(t); m != nil {
				l.Entity = m[1]
			}
		case "edges":
			if m := jsonFromRe.FindStringSubmatch(t); m != nil {
				l.Entity = m[1]
			}
		case "inputs", "outputs":
			if m := jsonNameRe.FindStringSubmatch(t); m != nil && strings.HasPrefix(t, "    ") {
				l.Entity = m[1]
			}
		}
		out = append(out, l)
	}
	return out
}

// Text joins lines back into a file (with a final newline).
func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

func (s *Source) texts() []string {
	out := make([]string, len(s.Lines))
	for i, l := range s.Lines {
		out[i] = l.Text
	}
	return out
}

// isStepParam reports whether l is a top-level param line of a step.
func (l Line) isStepParam() bool { return l.Dash && l.Section == "steps" && l.Entity != "" }

// isParam reports whether l is a `- key:` line of any entity.
func (l Line) isParam() bool { return l.Dash && l.Entity != "" }
