package sink

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// VarPrefix starts the name of every environment variable that carries a
// template value into a shell command: ${name} becomes ${_pflow_1}.
const VarPrefix = "_pflow_"

// ShellCommand is a shell command with its template values bound as data.
type ShellCommand struct {
	// Command is the text given to /bin/sh -c: the author's command with each
	// template replaced by a reference to its variable.
	Command string
	// Env maps each variable to the text of its value.
	Env map[string]string
	// Unresolved lists templates whose path did not resolve (their variable
	// holds the template's own text), in order of appearance.
	Unresolved []string
}

// slot is one template of a command: where its variable reference sits in
// the rewritten text and how the shell reads it there.
type slot struct {
	ref        template.Ref
	name       string
	start, end int  // of "${_pflow_N}" in the rewritten text
	arith      bool // inside an arithmetic expansion: the value must be an integer
}

// Problem is a template that cannot be bound safely where it stands.
type Problem struct {
	// Template is the template as written ("${name}").
	Template string
	// Offset is its byte offset in the param's text.
	Offset  int
	Message string
	Hint    string
}

func (p *Problem) Error() string { return p.Message }

// prepared is a command rewritten to reference variables, before values.
type prepared struct {
	text  string
	slots []slot
}

var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^_pflow_[0-9]+$`) })

// prepare replaces every template of cmd by a variable reference, parses the
// result with a real shell parser and adjusts each reference to its quoting:
// inside double quotes, unquoted, in a heredoc or a command substitution the
// reference is the same shell expansion the author wrote; inside single
// quotes the quote is closed around a double-quoted reference, so '${x}'
// still yields the value. A template the shell would read as literal text
// (a quoted heredoc, $'...', an escaped "\${") is a Problem.
func prepare(cmd string) (*prepared, []*Problem) {
	parts := template.Parts(cmd)
	var b strings.Builder
	var slots []slot
	names := map[string]string{} // raw template → variable
	offsets := []int{}           // offset of each slot's template in cmd
	for _, p := range parts {
		if p.Ref == nil {
			b.WriteString(p.Text)
			continue
		}
		name, ok := names[p.Ref.Raw]
		if !ok {
			name = VarPrefix + strconv.Itoa(len(names)+1)
			names[p.Ref.Raw] = name
		}
		start := b.Len()
		b.WriteString("${" + name + "}")
		slots = append(slots, slot{ref: *p.Ref, name: name, start: start, end: b.Len()})
		offsets = append(offsets, p.Ref.Start)
	}
	text := b.String()
	if len(slots) == 0 {
		return &prepared{text: text}, nil
	}
	f, err := parse(text)
	if err != nil {
		return nil, []*Problem{{
			Template: slots[0].ref.Raw,
			Offset:   offsets[0],
			Message:  fmt.Sprintf("the command is not valid shell syntax (%s), so its templates cannot be bound safely", shellError(err)),
			Hint:     "Fix the command's quoting or syntax; check it with `sh -n -c '<command>'`.",
		}}
	}

	expanded := map[int]bool{} // start offsets of references the shell expands
	var arith, single, comments [][2]int
	var dollarSingle [][2]int
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			if x.Param != nil && placeholderRE().MatchString(x.Param.Value) {
				expanded[int(x.Dollar.Offset())] = true
			}
			if x.Index != nil {
				arith = append(arith, span(x.Index))
			}
			if x.Slice != nil {
				arith = append(arith, span(x))
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			// Arithmetic evaluates a variable's value as an expression
			// (in bash, recursively, with command substitution in array
			// subscripts): only integers may go there.
			arith = append(arith, span(x))
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				arith = append(arith, span(x))
			}
		case *syntax.SglQuoted:
			r := [2]int{int(x.Pos().Offset()), int(x.End().Offset())}
			if x.Dollar {
				dollarSingle = append(dollarSingle, r)
			} else {
				single = append(single, r)
			}
		case *syntax.Comment:
			comments = append(comments, [2]int{int(x.Pos().Offset()), int(x.End().Offset())})
		}
		return true
	})
	for _, c := range f.Stmts {
		for _, cm := range c.Comments {
			comments = append(comments, [2]int{int(cm.Pos().Offset()), int(cm.End().Offset())})
		}
	}
	for _, cm := range f.Last {
		comments = append(comments, [2]int{int(cm.Pos().Offset()), int(cm.End().Offset())})
	}
	within := func(rs [][2]int, o int) bool {
		for _, r := range rs {
			if o >= r[0] && o < r[1] {
				return true
			}
		}
		return false
	}

	var problems []*Problem
	var quoteSplits []int // indices of slots to re-quote
	for i := range slots {
		s := &slots[i]
		switch {
		case expanded[s.start]:
			s.arith = within(arith, s.start)
		case within(single, s.start):
			quoteSplits = append(quoteSplits, i)
		case within(comments, s.start):
			// A template in a comment is never read; its variable is unused.
		case within(dollarSingle, s.start):
			problems = append(problems, &Problem{Template: s.ref.Raw, Offset: offsets[i],
				Message: fmt.Sprintf("template %s is inside a $'...' string, where the shell cannot expand a variable", s.ref.Raw),
				Hint:    fmt.Sprintf("Close the $'...' string before the template and put it in double quotes: $'...'\"%s\"$'...'.", s.ref.Raw)})
		default:
			problems = append(problems, &Problem{Template: s.ref.Raw, Offset: offsets[i],
				Message: fmt.Sprintf("template %s is where the shell reads literal text (a quoted heredoc such as <<'EOF', or an escaped \\$), so its value cannot be passed safely", s.ref.Raw),
				Hint:    fmt.Sprintf("Pass the value on the step's stdin (- stdin: %s) and read it with cat, or use an unquoted heredoc (<<EOF) where the shell expands variables.", s.ref.Raw)})
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	if len(quoteSplits) > 0 {
		// Close the single quote, expand in double quotes, reopen: '${x}' →
		// ''"${_pflow_1}"''. Slots are in text order: editing from the last
		// keeps the offsets of the earlier ones valid.
		for k := len(quoteSplits) - 1; k >= 0; k-- {
			s := slots[quoteSplits[k]]
			text = text[:s.start] + `'"${` + s.name + `}"'` + text[s.end:]
		}
	}
	return &prepared{text: text, slots: slots}, nil
}

func span(n syntax.Node) [2]int { return [2]int{int(n.Pos().Offset()), int(n.End().Offset())} }

func parse(text string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err == nil {
		return f, nil
	}
	if f2, err2 := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(text), ""); err2 == nil {
		return f2, nil
	}
	return nil, err
}

// shellError renders a parse error without the file-name prefix.
func shellError(err error) string {
	return strings.TrimPrefix(err.Error(), ":")
}

// CheckShell reports the templates of cmd that cannot be bound safely,
// without values (static validation).
func CheckShell(cmd string) []*Problem {
	_, problems := prepare(cmd)
	return problems
}

// Shell binds the templates of cmd to environment variables, resolving their
// values against root. Values are rendered as in text (value.Stringify). A
// value in an arithmetic expansion must be an integer; no value may contain
// a NUL byte (no environment variable can hold one).
func Shell(cmd string, root map[string]any) (*ShellCommand, error) {
	p, problems := prepare(cmd)
	if len(problems) > 0 {
		return nil, problems[0]
	}
	out := &ShellCommand{Command: p.text}
	if len(p.slots) == 0 {
		return out, nil
	}
	out.Env = make(map[string]string, len(p.slots))
	for _, s := range p.slots {
		if _, done := out.Env[s.name]; done && !s.arith {
			continue
		}
		v, found := template.Value(root, s.ref)
		text := s.ref.Raw
		if found {
			text = value.Stringify(v)
		} else if !slices.Contains(out.Unresolved, s.ref.Raw) {
			out.Unresolved = append(out.Unresolved, s.ref.Raw)
		}
		if strings.IndexByte(text, 0) >= 0 {
			return nil, &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
				Message: fmt.Sprintf("the value of %s contains a NUL byte, which no shell variable can hold", s.ref.Raw),
				Hint:    fmt.Sprintf("Pass binary data on the step's stdin (- stdin: %s) or write it to a file first.", s.ref.Raw)}
		}
		if s.arith && found && !isInteger(text) {
			return nil, &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
				Message: fmt.Sprintf("%s is used in shell arithmetic $((...)), but its value %q is not an integer", s.ref.Raw, abbreviate(text, 40)),
				Hint:    "Arithmetic evaluates its operands as expressions; only whole numbers are passed into it. Check the value upstream or compute outside $((...))."}
		}
		out.Env[s.name] = text
	}
	return out, nil
}

var integerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*[+-]?[0-9]+[ \t]*$`) })

func isInteger(s string) bool { return integerRE().MatchString(s) }

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
