package mutate

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Diag is one finding of validation.
type Diag struct {
	Severity string // "error" or "warning"
	Line     int
	Step     string
	Message  string
}

func (d Diag) String() string {
	s := d.Message
	if d.Step != "" {
		s = "[" + d.Step + "] " + s
	}
	if d.Line > 0 {
		s = fmt.Sprintf("Line %d: %s", d.Line, s)
	}
	return d.Severity + ": " + s
}

// Validation is what validation said of a workflow.
type Validation struct {
	Refused bool
	Diags   []Diag
}

// Case is one set of inputs a workflow runs with. In Params and Stdin,
// $WORK is the run's directory and other $NAMEs are the Subject's Vars.
type Case struct {
	Name   string
	Params []string // key=value
	Stdin  string
}

// Exec validates and runs workflow files. Validate is `pflow
// --validate-only file` with the inputs of the cases, when given (the
// values a run would refuse are refused there too); Run runs file with c's inputs in the directory dir
// and returns what the run did, as text that is equal for two runs that
// behaved the same (a run's directory and home are already written as $WORK
// and $HOME).
type Exec interface {
	Validate(ctx context.Context, file string, cases []Case) (Validation, error)
	Run(ctx context.Context, file string, c Case, dir string) (string, error)
}

// Subject is one workflow the harness mutates.
type Subject struct {
	// Name is the workflow's path relative to the repository root.
	Name string
	// Path is the file on disk; Siblings are other files of its directory
	// that runs need (a nested workflow's child), copied beside it.
	Path     string
	Siblings []string
	Cases    []Case
	// Skip, when set, says why the workflow is not mutated.
	Skip string
}

// Verdict is what became of a mutant.
type Verdict string

const (
	// Caught: refused with a diagnostic naming the edited line or step.
	Caught Verdict = "caught"
	// CaughtBadly: refused, but no diagnostic names the line or step.
	CaughtBadly Verdict = "caught-unlocated"
	// Equivalent: accepted, and every case ran exactly like the original.
	Equivalent Verdict = "equivalent"
	// Warned: accepted with a warning the original does not get, naming the
	// edited line or step, and some case ran differently: validation did
	// not call it valid without saying what it does.
	Warned Verdict = "warned"
	// Survivor: accepted without such a warning, and some case ran
	// differently.
	Survivor Verdict = "survivor"
	// Broken: the harness could not decide (an error of its own).
	Broken Verdict = "error"
)

// Result is one mutant's verdict with its evidence.
type Result struct {
	Mutant  Mutant
	Verdict Verdict
	// Validation is what validation said (errors when refused, warnings
	// when accepted).
	Validation []Diag
	// Diff shows how the first differing case ran, original then mutant.
	Diff string
}

// Sampled reports whether id is in the 1-in-every sample: a hash of the id,
// so a mutant stays in or out of the sample whatever else changes.
func Sampled(id string, every int) bool {
	if every <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%uint32(every) == 0
}

// Located reports whether some error of v names the mutant's line or one of
// its steps.
func Located(m Mutant, v Validation) bool {
	return names(m, v.Diags, "error")
}

// names reports whether a diagnostic of ds of the severity names m's line or
// one of its steps.
func names(m Mutant, ds []Diag, severity string) bool {
	for _, d := range ds {
		if d.Severity != severity {
			continue
		}
		if d.Line > 0 && slices.Contains(m.Lines, d.Line) {
			return true
		}
		for _, s := range m.Steps {
			if d.Step == s || strings.Contains(d.Message, "'"+s+"'") {
				return true
			}
		}
	}
	return false
}

// newWarnings are the warnings of v that were not among the original's
// (compared without numbers: lines move).
func newWarnings(v Validation, original map[string]bool) []Diag {
	var out []Diag
	for _, d := range v.Diags {
		if d.Severity == "warning" && !original[withoutNumbers(d.Message)] {
			out = append(out, d)
		}
	}
	return out
}

func withoutNumbers(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, s)
}

// Checker checks the mutants of subjects with an Exec.
type Checker struct {
	Exec Exec
	// Dir is where the checker makes its directories (a temporary one).
	Dir       string
	n         int
	made      []string
	baselines map[string]baseline
	// warnings are the originals' warnings (withoutNumbers), by subject.
	warnings map[string]map[string]bool
}

// cleanup removes the directories made since the last cleanup.
func (c *Checker) cleanup() {
	for _, d := range c.made {
		os.RemoveAll(d)
	}
	c.made = nil
}

func (c *Checker) tempDir() (string, error) {
	c.n++
	d := filepath.Join(c.Dir, fmt.Sprintf("m%05d", c.n))
	c.made = append(c.made, d)
	return d, os.MkdirAll(d, 0o755)
}

// place writes text as the subject's file in a new directory with its
// siblings, and returns the file's path.
func (c *Checker) place(s Subject, text string) (string, error) {
	d, err := c.tempDir()
	if err != nil {
		return "", err
	}
	for _, sib := range s.Siblings {
		b, err := os.ReadFile(sib)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(d, filepath.Base(sib)), b, 0o644); err != nil {
			return "", err
		}
	}
	file := filepath.Join(d, filepath.Base(s.Path))
	return file, os.WriteFile(file, []byte(text), 0o644)
}

// Original validates the unmutated subject: it must be valid to judge its
// mutants.
func (c *Checker) Original(ctx context.Context, s Subject) error {
	defer c.cleanup()
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return err
	}
	file, err := c.place(s, string(b))
	if err != nil {
		return err
	}
	v, err := c.Exec.Validate(ctx, file, s.Cases)
	if err != nil {
		return err
	}
	if v.Refused {
		return fmt.Errorf("%s: the original does not validate: %v", s.Name, v.Diags)
	}
	if c.warnings == nil {
		c.warnings = map[string]map[string]bool{}
	}
	c.warnings[s.Name] = map[string]bool{}
	for _, d := range v.Diags {
		c.warnings[s.Name][withoutNumbers(d.Message)] = true
	}
	return nil
}

// baseline runs the unmutated subject, each case twice (a workflow that
// does not run the same twice cannot judge its mutants), the first time a
// mutant of it needs running.
func (c *Checker) baseline(ctx context.Context, s Subject) ([]string, error) {
	if b, ok := c.baselines[s.Name]; ok {
		return b.runs, b.err
	}
	if c.baselines == nil {
		c.baselines = map[string]baseline{}
	}
	runs, err := c.runOriginal(ctx, s)
	c.baselines[s.Name] = baseline{runs, err}
	return runs, err
}

type baseline struct {
	runs []string
	err  error
}

func (c *Checker) runOriginal(ctx context.Context, s Subject) ([]string, error) {
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, err
	}
	file, err := c.place(s, string(b))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cs := range s.Cases {
		var runs [2]string
		for i := range runs {
			d, err := c.tempDir()
			if err != nil {
				return nil, err
			}
			if runs[i], err = c.Exec.Run(ctx, file, cs, d); err != nil {
				return nil, err
			}
		}
		if runs[0] != runs[1] {
			return nil, fmt.Errorf("%s: case %s does not run the same twice:\n%s", s.Name, cs.Name, lineDiff(runs[0], runs[1]))
		}
		out = append(out, runs[0])
	}
	return out, nil
}

// Check decides one mutant of s.
func (c *Checker) Check(ctx context.Context, s Subject, m Mutant) Result {
	defer c.cleanup()
	r := Result{Mutant: m}
	file, err := c.place(s, m.Text)
	if err != nil {
		r.Verdict, r.Diff = Broken, err.Error()
		return r
	}
	v, err := c.Exec.Validate(ctx, file, s.Cases)
	if err != nil {
		r.Verdict, r.Diff = Broken, err.Error()
		return r
	}
	r.Validation = v.Diags
	if v.Refused {
		r.Verdict = CaughtBadly
		if Located(m, v) {
			r.Verdict = Caught
		}
		return r
	}
	base, err := c.baseline(ctx, s)
	if err != nil {
		r.Verdict, r.Diff = Broken, "the original: "+err.Error()
		return r
	}
	r.Verdict = Equivalent
	for i, cs := range s.Cases {
		d, err := c.tempDir()
		if err != nil {
			r.Verdict, r.Diff = Broken, err.Error()
			return r
		}
		got, err := c.Exec.Run(ctx, file, cs, d)
		if err != nil {
			r.Verdict, r.Diff = Broken, err.Error()
			return r
		}
		if got != base[i] {
			r.Verdict = Survivor
			if names(m, newWarnings(v, c.warnings[s.Name]), "warning") {
				r.Verdict = Warned
			}
			r.Diff = "case " + cs.Name + ":\n" + lineDiff(base[i], got)
			break
		}
	}
	return r
}

// lineDiff shows the lines of a and b that differ (- original, + mutant).
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	inB := map[string]int{}
	for _, l := range bl {
		inB[l]++
	}
	inA := map[string]int{}
	for _, l := range al {
		inA[l]++
	}
	var out []string
	for _, l := range al {
		if inB[l] == 0 {
			out = append(out, "- "+l)
		} else {
			inB[l]--
		}
	}
	for _, l := range bl {
		if inA[l] == 0 {
			out = append(out, "+ "+l)
		} else {
			inA[l]--
		}
	}
	if len(out) == 0 {
		return "(same lines in another order)"
	}
	return strings.Join(out, "\n")
}
