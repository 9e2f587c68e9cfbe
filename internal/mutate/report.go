package mutate

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Tally counts verdicts.
type Tally struct {
	Mutants, Caught, Located, Equivalent, Warned, Survivors, Errors int
}

func (t *Tally) add(v Verdict) {
	t.Mutants++
	switch v {
	case Caught:
		t.Caught++
		t.Located++
	case CaughtBadly:
		t.Caught++
	case Equivalent:
		t.Equivalent++
	case Warned:
		t.Warned++
	case Survivor:
		t.Survivors++
	case Broken:
		t.Errors++
	}
}

// CaughtShare is the share of mutants that behave differently which
// validation refused: caught / (caught + warned + survivors).
func (t Tally) CaughtShare() float64 {
	if t.Caught+t.Warned+t.Survivors == 0 {
		return 1
	}
	return float64(t.Caught) / float64(t.Caught+t.Warned+t.Survivors)
}

// Report is the outcome of a harness run.
type Report struct {
	Results []Result
	// Skipped are the workflows not mutated, with why.
	Skipped map[string]string
	// Known are the ids of known survivors (known-survivors.txt).
	Known map[string]bool
	// Sample is the 1-in-N sample the run checked (1: every mutant).
	Sample int
}

// Total counts every result.
func (r *Report) Total() Tally {
	var t Tally
	for _, x := range r.Results {
		t.add(x.Verdict)
	}
	return t
}

// Survivors are the survivors, split into known ones and new ones.
func (r *Report) Survivors() (known, unknown []Result) {
	for _, x := range r.Results {
		if x.Verdict != Survivor {
			continue
		}
		if r.Known[x.Mutant.ID] {
			known = append(known, x)
		} else {
			unknown = append(unknown, x)
		}
	}
	return known, unknown
}

// Fixed are known survivors this run checked that no longer survive.
func (r *Report) Fixed() []Result {
	var out []Result
	for _, x := range r.Results {
		if r.Known[x.Mutant.ID] && x.Verdict != Survivor {
			out = append(out, x)
		}
	}
	return out
}

func tallyBy(results []Result, key func(Result) string) (map[string]*Tally, []string) {
	m := map[string]*Tally{}
	var keys []string
	for _, x := range results {
		k := key(x)
		if m[k] == nil {
			m[k] = &Tally{}
			keys = append(keys, k)
		}
		m[k].add(x.Verdict)
	}
	return m, keys
}

func writeTable(w io.Writer, title string, m map[string]*Tally, keys []string, total Tally) {
	fmt.Fprintf(w, "| %s | mutants | caught | caught, located | equivalent | warned | survivors | errors | caught share |\n", title)
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	row := func(k string, t Tally) {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %.1f %% |\n", k, t.Mutants, t.Caught, t.Located, t.Equivalent, t.Warned, t.Survivors, t.Errors, 100*t.CaughtShare())
	}
	for _, k := range keys {
		row(k, *m[k])
	}
	row("**total**", total)
	fmt.Fprintln(w)
}

// Write renders the report as markdown.
func (r *Report) Write(w io.Writer) {
	total := r.Total()
	sample := "every mutant"
	if r.Sample > 1 {
		sample = fmt.Sprintf("a 1-in-%d sample of the mutants", r.Sample)
	}
	fmt.Fprintf(w, "# Mutation report\n\nChecked %s: %d mutants; %d caught (%d naming the edited line or step, %d refused without naming it), %d equivalent, %d warned (accepted with a new warning naming the edit, ran differently), %d survivors (accepted without one, ran differently), %d harness errors. Caught share (caught / (caught + warned + survivors)): %.1f %%.\n\n",
		sample, total.Mutants, total.Caught, total.Located, total.Caught-total.Located, total.Equivalent, total.Warned, total.Survivors, total.Errors, 100*total.CaughtShare())
	if len(r.Skipped) > 0 {
		fmt.Fprintln(w, "Not mutated:")
		keys := make([]string, 0, len(r.Skipped))
		for k := range r.Skipped {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "- %s: %s\n", k, r.Skipped[k])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "## Per workflow")
	fmt.Fprintln(w)
	m, keys := tallyBy(r.Results, func(x Result) string { return x.Mutant.Source })
	writeTable(w, "workflow", m, keys, total)
	fmt.Fprintln(w, "## Per operator")
	fmt.Fprintln(w)
	m, keys = tallyBy(r.Results, func(x Result) string { return x.Mutant.Op })
	order := map[string]int{}
	for i, op := range Operators {
		order[op.Name] = i
	}
	slices.SortFunc(keys, func(a, b string) int { return order[a] - order[b] })
	writeTable(w, "operator", m, keys, total)

	known, unknown := r.Survivors()
	fmt.Fprintf(w, "## Survivors (%d: %d new, %d known)\n\n", len(known)+len(unknown), len(unknown), len(known))
	all := append(slices.Clone(unknown), known...)
	slices.SortStableFunc(all, func(a, b Result) int { return order[a.Mutant.Op] - order[b.Mutant.Op] })
	op := ""
	for _, x := range all {
		if x.Mutant.Op != op {
			op = x.Mutant.Op
			fmt.Fprintf(w, "### %s\n\n", op)
		}
		WriteResult(w, x, r.Known[x.Mutant.ID])
	}
	var warned []Result
	for _, x := range r.Results {
		if x.Verdict == Warned {
			warned = append(warned, x)
		}
	}
	if len(warned) > 0 {
		fmt.Fprintf(w, "## Warned (%d): accepted with a warning that names the edit\n\n", len(warned))
		for _, x := range warned {
			WriteResult(w, x, false)
		}
	}
	if fixed := r.Fixed(); len(fixed) > 0 {
		fmt.Fprintf(w, "## Known survivors that no longer survive (%d): remove them from internal/mutate/testdata/known-survivors.txt\n\n", len(fixed))
		for _, x := range fixed {
			fmt.Fprintf(w, "- %s (%s)\n", x.Mutant.ID, x.Verdict)
		}
		fmt.Fprintln(w)
	}
	var badly []Result
	for _, x := range r.Results {
		if x.Verdict == CaughtBadly || x.Verdict == Broken {
			badly = append(badly, x)
		}
	}
	if len(badly) > 0 {
		fmt.Fprintf(w, "## Caught without naming the line or step, and harness errors (%d)\n\n", len(badly))
		for _, x := range badly {
			WriteResult(w, x, false)
		}
	}
}

// WriteResult renders one mutant with its edit, what validation said and
// how its run differed.
func WriteResult(w io.Writer, x Result, known bool) {
	tag := ""
	if known {
		tag = " (known)"
	}
	fmt.Fprintf(w, "- `%s`%s: %s\n", x.Mutant.ID, tag, x.Verdict)
	fmt.Fprintf(w, "  - before: %s\n", indent(x.Mutant.Before))
	fmt.Fprintf(w, "  - after:  %s\n", indent(x.Mutant.After))
	if len(x.Validation) == 0 {
		fmt.Fprintln(w, "  - validation: nothing")
	} else {
		fmt.Fprintln(w, "  - validation:")
		for _, d := range x.Validation {
			fmt.Fprintf(w, "    - %s\n", indent(firstLines(d.String(), 3)))
		}
	}
	if x.Diff != "" {
		fmt.Fprintf(w, "  - run (- original, + mutant):\n\n```text\n%s\n```\n", firstLines(x.Diff, 16))
	}
	fmt.Fprintln(w)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// ParseKnown reads a known-survivors list: one mutant id per line; blank
// lines and lines starting with # are ignored.
func ParseKnown(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}
