package cli

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/ask"
)

// termAsker puts an ask step's question to the person at the terminal: the
// question on stderr, the answer read from stdin (a choice's name, a
// unique start of it, or its number), then each input the step's schema
// asks for. It is the run's Asker when stdin and stderr are terminals.
type termAsker struct {
	ios *IOStreams
	// hold, when set, stops the progress line from being redrawn over the
	// question.
	hold func()
	mu   sync.Mutex // one question at a time (parallel batch items)
	once sync.Once
	// lines carries stdin's lines, read by one goroutine for the process
	// (a read cannot be cancelled; the next question takes the next line).
	lines chan string
}

// terminalAsker is the Asker of a run in a terminal; nil when stdin or
// stderr is not one (the run then pauses at an ask step).
func terminalAsker(ios *IOStreams, pr *progress) node.Asker {
	if !ios.InTTY || !ios.ErrTTY || ios.In == nil {
		return nil
	}
	a := &termAsker{ios: ios}
	if pr != nil {
		a.hold = pr.hold
	}
	return a
}

func (a *termAsker) readLines() {
	a.lines = make(chan string)
	go func() {
		r := bufio.NewReader(a.ios.In)
		for {
			line, err := r.ReadString('\n')
			if line != "" || err == nil {
				a.lines <- strings.TrimRight(line, "\r\n")
			}
			if err != nil {
				close(a.lines)
				return
			}
		}
	}()
}

// readLine waits for the next line, or ctx's end.
func (a *termAsker) readLine(ctx context.Context) (string, error) {
	a.once.Do(a.readLines)
	select {
	case line, ok := <-a.lines:
		if !ok {
			return "", fmt.Errorf("%w: the terminal closed its input", node.ErrNoAsker)
		}
		return strings.TrimSpace(line), nil
	case <-ctx.Done():
		fmt.Fprintln(a.ios.ErrOut)
		return "", ctx.Err()
	}
}

func (a *termAsker) Ask(ctx context.Context, q node.Question) (node.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hold != nil {
		a.hold()
	}
	w := a.ios.ErrOut
	es := a.ios.ErrStyle()
	fmt.Fprintf(w, "%s %s\n", es.Hint("?"), q.Message)
	if q.Who != "" {
		fmt.Fprintf(w, "  (to be answered by %s)\n", q.Who)
	}
	ans := node.Answer{Channel: ask.ChannelTerminal}
	if len(q.Choices) > 0 {
		for i, c := range q.Choices {
			fmt.Fprintf(w, "  %d) %s\n", i+1, c)
		}
		for {
			fmt.Fprintf(w, "Choose [%s]: ", strings.Join(q.Choices, "/"))
			line, err := a.readLine(ctx)
			if err != nil {
				return ans, err
			}
			if c, ok := pickChoice(q.Choices, line); ok {
				ans.Choice = c
				break
			}
			fmt.Fprintf(w, "  %q is not one of the choices.\n", line)
		}
	}
	if q.Schema != nil && ans.Choice != "deny" {
		ans.Input = map[string]any{}
		required := ask.Required(q.Schema)
		for _, p := range ask.Properties(q.Schema) {
			typ := ask.PropType(q.Schema, p)
			for {
				opt := ""
				if !containsStr(required, p) {
					opt = ", optional"
				}
				fmt.Fprintf(w, "%s (%s%s): ", p, typ, opt)
				line, err := a.readLine(ctx)
				if err != nil {
					return ans, err
				}
				if line == "" && opt != "" {
					break
				}
				v, err := ask.CoerceValue(q.Schema, p, line)
				if err == nil {
					ans.Input[p] = v
					break
				}
				fmt.Fprintf(w, "  %v\n", err)
			}
		}
	}
	return ans, nil
}

// pickChoice reads a typed answer: a choice's name, its number, or a start
// of it that only one choice has ("a" for approve).
func pickChoice(choices []string, typed string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(typed))
	if t == "" {
		return "", false
	}
	if n, err := strconv.Atoi(t); err == nil && n >= 1 && n <= len(choices) {
		return choices[n-1], true
	}
	var match []string
	for _, c := range choices {
		if c == t {
			return c, true
		}
		if strings.HasPrefix(c, t) {
			match = append(match, c)
		}
	}
	if len(match) == 1 {
		return match[0], true
	}
	return "", false
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hold ends the running step's progress line so that a question can be
// asked under it; the step's result line follows when it ends.
func (p *progress) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line != "" {
		fmt.Fprintln(p.w)
		p.line = ""
	}
}

// renderWaiting tells the person that the run paused at an ask step, what
// it asks and how to answer (stdout stays empty: there is no result yet).
func renderWaiting(ios *IOStreams, opts *runOptions, t *app.Target, out *app.RunOutcome) error {
	w, es := ios.ErrOut, ios.ErrStyle()
	r := out.Result
	wt := r.Waiting
	if !ios.liveProgress() || opts.verbose {
		printSteps(w, r, opts.verbose)
	}
	fmt.Fprintln(w, es.Warning(fmt.Sprintf("⏸ Workflow waiting for an answer at step '%s'", wt.NodeID)))
	fmt.Fprintf(w, "  %s %s\n", es.Hint("?"), indentRest(out.Redactor.String(wt.Question.Message), "    "))
	if len(wt.Question.Choices) > 0 {
		fmt.Fprintf(w, "  Choices: %s\n", strings.Join(wt.Question.Choices, ", "))
	}
	if wt.Question.Who != "" {
		fmt.Fprintf(w, "  To be answered by: %s\n", wt.Question.Who)
	}
	if rep := app.Report(out, t, app.Person).Waiting; rep != nil {
		if rep.Command != "" {
			fmt.Fprintf(w, "%s %s\n", es.Hint("↻ Answer it (finished steps do not run again):"), rep.Command)
		} else {
			fmt.Fprintln(w, rep.Say)
		}
	}
	return exitFor(out)
}
