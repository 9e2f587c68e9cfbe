package sink

import (
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/pflow-go/pflow/internal/template"
)

// StdinReader names the first command of a shell command that reads the
// command's own standard input (a filter such as `tr a-z A-Z`, `wc -l`,
// `jq .x`, `sed 's/a/b/'`, `while read line`), or returns "" when none
// does. A shell step without `stdin` gives its command an empty input, so
// such a command can only read nothing.
//
// It answers only what it is sure of: a command it does not know, an
// option it does not know, an operand that may name a file (a template
// value included), a redirect of standard input, a pipe, a background job
// or a function body all count as not reading it.
func StdinReader(cmd string) string {
	var b strings.Builder
	for _, p := range template.Parts(cmd) {
		if p.Ref == nil {
			b.WriteString(p.Text)
		} else {
			b.WriteString("${" + VarPrefix + "1}")
		}
	}
	f, err := parse(b.String())
	if err != nil {
		return ""
	}
	return stmtsReader(f.Stmts, true)
}

// stmtsReader is the first reader among list; in says whether their
// standard input is the command's own.
func stmtsReader(list []*syntax.Stmt, in bool) string {
	for _, s := range list {
		if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) == 1 && call.Args[0].Lit() == "exec" && redirectsStdin(s.Redirs) {
			in = false // `exec < file`: what follows reads the file
			continue
		}
		if r := stmtReader(s, in); r != "" {
			return r
		}
	}
	return ""
}

func stmtReader(s *syntax.Stmt, in bool) string {
	if s == nil {
		return ""
	}
	// A background job reads /dev/null; a redirect gives another input.
	if s.Background || s.Coprocess || redirectsStdin(s.Redirs) {
		in = false
	}
	return cmdReader(s.Cmd, in)
}

func cmdReader(c syntax.Command, in bool) string {
	switch x := c.(type) {
	case *syntax.CallExpr:
		// A command substitution in a word inherits the shell's input.
		for _, a := range x.Assigns {
			if a.Value != nil {
				if r := substReader(a.Value, in); r != "" {
					return r
				}
			}
		}
		for _, w := range x.Args {
			if r := substReader(w, in); r != "" {
				return r
			}
		}
		if in && len(x.Args) > 0 {
			return callReads(x)
		}
	case *syntax.BinaryCmd:
		if r := stmtReader(x.X, in); r != "" {
			return r
		}
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			in = false // the right side reads the pipe
		}
		return stmtReader(x.Y, in)
	case *syntax.Block:
		return stmtsReader(x.Stmts, in)
	case *syntax.Subshell:
		return stmtsReader(x.Stmts, in)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			if r := stmtsReader(x.Cond, in); r != "" {
				return r
			}
			if r := stmtsReader(x.Then, in); r != "" {
				return r
			}
		}
	case *syntax.WhileClause:
		if r := stmtsReader(x.Cond, in); r != "" {
			return r
		}
		return stmtsReader(x.Do, in)
	case *syntax.ForClause:
		return stmtsReader(x.Do, in)
	case *syntax.CaseClause:
		for _, it := range x.Items {
			if r := stmtsReader(it.Stmts, in); r != "" {
				return r
			}
		}
	case *syntax.TimeClause:
		return stmtReader(x.Stmt, in)
	}
	return "" // a function body, arithmetic, a test clause, …
}

// substReader looks into the command substitutions of w.
func substReader(w *syntax.Word, in bool) string {
	found := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		if found != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			found = stmtsReader(x.Stmts, in)
			return false
		case *syntax.ProcSubst:
			return false
		}
		return true
	})
	return found
}

// redirectsStdin reports whether rs give standard input another source.
func redirectsStdin(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			return true
		case syntax.RdrAll, syntax.AppAll:
			// &> redirects output only
		}
	}
	return false
}

// filter says how a command that reads standard input takes its operands.
type filter struct {
	// always: the command reads standard input whatever its operands (they
	// are not files).
	always bool
	// script is the number of leading operands that are not files (a
	// pattern, a program), unless one of scriptFlags gives it.
	script      int
	scriptFlags []string
	// args maps each option that takes arguments to their count.
	args map[string]int
	// flags are the options without argument it may have (any other option
	// makes the answer unknown).
	flags string
	// long are the long options without argument it may have.
	long []string
	// elsewhere are the options that make it read something else.
	elsewhere []string
}

// filters are the commands StdinReader knows (built on first use).
var filters = sync.OnceValue(func() map[string]filter {
	checksum := filter{flags: "bct", long: []string{"--binary", "--text", "--tag"}}
	return map[string]filter{
		"cat":       {flags: "AbeEnstTuv"},
		"tac":       {},
		"rev":       {},
		"tr":        {always: true, flags: "cCdst", long: []string{"--complement", "--delete", "--squeeze-repeats", "--truncate-set1"}},
		"tee":       {always: true, flags: "aip", long: []string{"--append"}},
		"wc":        {flags: "clmwL", long: []string{"--bytes", "--chars", "--lines", "--words", "--max-line-length"}},
		"sort":      {flags: "bdfgiMhnRrVcCsuz", args: map[string]int{"-k": 1, "-t": 1, "-o": 1, "-S": 1, "-T": 1}, long: []string{"--numeric-sort", "--reverse", "--unique", "--human-numeric-sort", "--version-sort", "--ignore-case", "--stable"}},
		"uniq":      {flags: "cdDiuz", args: map[string]int{"-f": 1, "-s": 1, "-w": 1}, long: []string{"--count", "--repeated", "--unique", "--ignore-case"}},
		"head":      {flags: "qvz", args: map[string]int{"-n": 1, "-c": 1}, long: []string{"--quiet", "--silent", "--verbose"}},
		"tail":      {flags: "qvzr", args: map[string]int{"-n": 1, "-c": 1}, long: []string{"--quiet", "--silent", "--verbose"}},
		"cut":       {flags: "sz", args: map[string]int{"-d": 1, "-f": 1, "-b": 1, "-c": 1}, long: []string{"--complement", "--only-delimited"}},
		"paste":     {flags: "sz", args: map[string]int{"-d": 1}, long: []string{"--serial"}},
		"fold":      {flags: "bs", args: map[string]int{"-w": 1}},
		"nl":        {flags: "p", args: map[string]int{"-b": 1, "-s": 1, "-w": 1, "-v": 1, "-i": 1, "-n": 1}},
		"base64":    {flags: "di", args: map[string]int{"-w": 1}, long: []string{"--decode", "--ignore-garbage"}},
		"md5sum":    checksum,
		"sha1sum":   checksum,
		"sha256sum": checksum,
		"sha512sum": checksum,
		"grep": {script: 1, scriptFlags: []string{"-e", "-f"}, flags: "EFGPivwxcLloqsnhHbaIzU",
			elsewhere: []string{"-r", "-R", "--recursive", "--dereference-recursive"},
			args:      map[string]int{"-e": 1, "-f": 1, "-m": 1, "-A": 1, "-B": 1, "-C": 1},
			long:      []string{"--ignore-case", "--invert-match", "--word-regexp", "--line-regexp", "--count", "--only-matching", "--quiet", "--silent", "--extended-regexp", "--fixed-strings", "--perl-regexp", "--line-number"}},
		"sed": {script: 1, scriptFlags: []string{"-e", "-f"}, flags: "nrEzsu", args: map[string]int{"-e": 1, "-f": 1},
			long: []string{"--quiet", "--silent", "--regexp-extended"}},
		"awk":  {script: 1, scriptFlags: []string{"-f"}, args: map[string]int{"-F": 1, "-v": 1, "-f": 1}},
		"gawk": {script: 1, scriptFlags: []string{"-f"}, args: map[string]int{"-F": 1, "-v": 1, "-f": 1}},
		"jq": {script: 1, scriptFlags: []string{"-f", "--from-file"}, flags: "rjacCMSesRn",
			args:      map[string]int{"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--indent": 1, "-f": 1, "--from-file": 1},
			long:      []string{"--raw-output", "--join-output", "--ascii-output", "--compact-output", "--color-output", "--monochrome-output", "--sort-keys", "--exit-status", "--slurp", "--raw-input", "--null-input", "--tab"},
			elsewhere: []string{"-n", "--null-input"}},
		"xargs": {always: true, flags: "0rtpx", args: map[string]int{"-n": 1, "-I": 1, "-d": 1, "-P": 1, "-L": 1, "-s": 1, "-E": 1, "-a": 1},
			long: []string{"--null", "--no-run-if-empty", "--verbose"}, elsewhere: []string{"-a", "--arg-file"}},
		"read": {always: true, flags: "rs", args: map[string]int{"-d": 1, "-n": 1, "-N": 1, "-p": 1, "-t": 1, "-u": 1, "-a": 1},
			elsewhere: []string{"-u"}},
	}
})

// callReads returns the command's name when it reads standard input.
func callReads(x *syntax.CallExpr) string {
	name := x.Args[0].Lit()
	f, ok := filters()[name]
	if !ok {
		return ""
	}
	args := f.args
	operands, scriptGiven := 0, false
	words := x.Args[1:]
	for i := 0; i < len(words); i++ {
		w := words[i].Lit()
		if w == "" {
			operands++ // a value (a template, an expansion): it may be a file
			continue
		}
		if w == "--" {
			operands += len(words) - i - 1
			break
		}
		if w == "-" {
			return name // "-" is standard input
		}
		if !strings.HasPrefix(w, "-") {
			operands++
			continue
		}
		opt, _, hasValue := strings.Cut(w, "=")
		for _, e := range f.elsewhere {
			if opt == e || !strings.HasPrefix(opt, "--") && len(e) == 2 && strings.HasPrefix(opt, "-") && strings.Contains(opt[1:], e[1:]) {
				return ""
			}
		}
		for _, s := range f.scriptFlags {
			if opt == s || len(s) == 2 && strings.HasPrefix(opt, s) {
				scriptGiven = true
			}
		}
		if n, ok := args[opt]; ok {
			if !hasValue {
				i += n
			}
			continue
		}
		if strings.HasPrefix(opt, "--") {
			if !slices.Contains(f.long, opt) {
				return "" // an option it does not know
			}
			continue
		}
		if (name == "head" || name == "tail") && isNumber(w[1:]) {
			continue // head -5
		}
		// a cluster of short options (-rn), the last may take a value
		// written on (-n5, -sd,) or as the next words
		for j, c := range opt[1:] {
			if n, ok := args["-"+string(c)]; ok {
				if j+2 == len(w) {
					i += n
				}
				break
			}
			if !strings.ContainsRune(f.flags, c) {
				return ""
			}
		}
	}
	if f.always {
		return name
	}
	files := operands
	if !scriptGiven {
		files -= f.script
	}
	if files <= 0 && (scriptGiven || operands >= f.script) {
		return name
	}
	return ""
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
