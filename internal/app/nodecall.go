package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/llm"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// ChainSeparator is the command-line argument that links node calls into
// one linear workflow: pflow a --x=1 '>>' b.
const ChainSeparator = ">>"

// ChainInput is the workflow input piped data fills in a node call or
// chain that reads stdin (it feeds the first node's main input).
const ChainInput = "input"

// RunnerFlagNames are the flags of a run that go before the workflow or
// node; one found among a node's params is reported as misplaced.
var RunnerFlagNames = []string{"output-format", "output-key", "print", "validate-only", "no-trace", "verbose",
	"resume", "rerun-unsafe", "no-cache", "no-record", "no-color", "trust-readonly",
	"temporal", "namespace", "task-queue", "detach", "save", "yes"}

// NodeCall is one node of a direct call or a chain: its type and its params,
// typed by the node's schema.
type NodeCall struct {
	Spec   *node.Spec
	Params map[string]any
}

// RunName is what a name on the command line names: a workflow (Target),
// a node type (Spec), or a request in words to plan a workflow from with
// the configured LLM (Request, see Plan); exactly one is set.
type RunName struct {
	Target  *Target
	Spec    *node.Spec
	Request string
}

// ResolveRunName resolves a person's command-line name in one order: a
// path-like name (with a '/' or ending in .md/.json) is a file; a request
// in words (it holds a space) is planned when an LLM is configured (else
// the error says how to configure one); otherwise a saved workflow, then a
// node type. A name that is both a saved workflow and a node type is an
// error naming both and how to pick one: pflow never guesses between them.
func (a *App) ResolveRunName(ctx context.Context, name string) (*RunName, error) {
	if IsPlanRequest(name) && !looksLikePath(name) {
		// Names of saved workflows and node types hold no spaces.
		if !a.PlannerConfigured() {
			return nil, planFromWordsError(strings.TrimSpace(name))
		}
		return &RunName{Request: strings.TrimSpace(name)}, nil
	}
	t, werr := a.ResolveTarget(name)
	if looksLikePath(name) {
		if werr != nil {
			return nil, werr
		}
		return &RunName{Target: t}, nil
	}
	if werr != nil && pferr.KindOf(werr) != pferr.NotFound && pferr.KindOf(werr) != pferr.Validation {
		return nil, werr
	}
	spec, cat, nerr := a.lookupRunNode(ctx, name)
	if nerr != nil && pferr.KindOf(nerr) != pferr.NotFound {
		if werr != nil {
			return nil, nerr // a node type that exists but cannot run (denied)
		}
		spec = nil
	}
	switch {
	case werr == nil && spec != nil:
		return nil, &pferr.Error{Kind: pferr.Usage,
			Message: fmt.Sprintf("'%s' is both a saved workflow (%s) and a node type (%s); pflow does not guess which to run", name, t.Path, spec.Type),
			Details: map[string]any{"workflow": t.Path, "node_type": spec.Type},
			Hint: fmt.Sprintf("Run the workflow with 'pflow run %s key=value', or the node with 'pflow registry run %s --param=value'. "+
				"To end the clash, rename the workflow: pflow workflow save %s --name my-%s, then pflow workflow delete %s.", name, spec.Type, t.Path, name, name)}
	case werr == nil:
		return &RunName{Target: t}, nil
	case spec != nil:
		return &RunName{Spec: spec}, nil
	}
	// Neither: the workflow error, with node types of a similar name.
	pe := *pferr.As(werr)
	if cat != nil {
		if s := typoOfNodeType(cat, name); len(s) > 0 {
			pe.Suggestions = append(slices.Clone(pe.Suggestions), "Node types of a similar name: "+strings.Join(s, ", ")+" (run one as 'pflow <node> --param=value')")
		}
	}
	return nil, &pe
}

// typoOfNodeType lists the listed node types within an edit distance of 2
// of name (a typo such as 'shel' or 'red-file', not a name that merely
// contains a type).
func typoOfNodeType(cat *registry.Catalog, name string) []string {
	var out []string
	for _, t := range cat.Types() {
		s, _ := cat.Lookup(t)
		if s == nil || (s.Hidden && !cat.IncludeHidden) {
			continue
		}
		if d := suggest.Distance(name, t); d <= 2 && len(out) < 3 {
			out = append(out, t)
		}
	}
	return out
}

// planFromWordsError is the answer to a request in words when no LLM is
// configured to plan a workflow from it: how to configure one, and
// discover to find a saved workflow meanwhile.
func planFromWordsError(request string) error {
	return &pferr.Error{Kind: pferr.Usage,
		Message: fmt.Sprintf("%q is not a saved workflow, a file or a node type, and planning a workflow from words needs an LLM, but none is configured", request),
		Hint: "Configure one: set a default model with 'pflow settings llm set-default <provider/model>' " +
			"(llm.default_model in settings.json), or an API key (" + strings.Join(llm.AutoDetectKeys(), ", ") +
			") in the environment or stored with 'pflow settings set-env KEY=value'; then ask again. Meanwhile find a saved workflow that fits: pflow workflow discover \"" + request + "\"",
		Fixes: []pferr.Fix{{Text: "To find a saved workflow for it, {do}.", Do: pferr.Run("workflow discover \""+request+"\"", "workflow_discover", map[string]any{"query": request})}}}
}

// wordsNotAName is the answer to a request in words where only a workflow
// name or file goes ('pflow run'): plan it without 'run' when an LLM is
// configured, else how to configure one.
func (a *App) wordsNotAName(request string) error {
	if !a.PlannerConfigured() {
		return planFromWordsError(request)
	}
	return &pferr.Error{Kind: pferr.Usage,
		Message: fmt.Sprintf("%q is not a saved workflow or a file: 'pflow run' runs workflows by name or path, and this is a request in words", request),
		Hint:    "To plan a workflow from it with the configured LLM, leave out 'run': pflow \"" + request + "\""}
}

// lookupRunNode finds the node type a command-line name names (hidden test
// nodes only when settings show them). It returns the catalog for
// suggestions.
func (a *App) lookupRunNode(ctx context.Context, name string) (*node.Spec, *registry.Catalog, error) {
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := LookupNodeType(cat, name)
	if err != nil {
		return nil, cat, err
	}
	if s.Hidden && !cat.IncludeHidden {
		return nil, cat, pferr.Newf(pferr.NotFound, "node type '%s' not found in the registry", name)
	}
	return s, cat, nil
}

// ParseNodeArgs reads a node's params from command-line arguments:
// --key=value, --key value, --flag (a bool param), and key=value. Keys may
// use '-' for '_' (--ignore-errors). Each value is read by the param's
// declared type (numbers, booleans, JSON objects and lists); a value
// starting with '@' is the content of that file ('@@' for a literal '@').
// An unknown key is an error with the closest param names.
func ParseNodeArgs(spec *node.Spec, args []string) (map[string]any, error) {
	out := map[string]any{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var key, raw string
		var hasValue bool
		switch {
		case a == ">":
			return nil, &pferr.Error{Kind: pferr.Usage,
				Message: fmt.Sprintf("a lone '>' reached pflow after node '%s': the shell read '\\>>' as '>' followed by a redirect (the output went to a file)", spec.Type),
				Hint:    "Link nodes with '>>' as one argument: quoted ('>>' or \">>\") or with both characters escaped (\\>\\>); this works in bash, zsh and fish."}
		case strings.HasPrefix(a, "--") && len(a) > 2:
			key, raw, hasValue = strings.Cut(a[2:], "=")
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return nil, &pferr.Error{Kind: pferr.Usage,
				Message: fmt.Sprintf("'%s' after node '%s' is not a parameter: node params are long flags", a, spec.Type),
				Hint:    fmt.Sprintf("Write params as --name=value (see 'pflow %s --help'); flags of pflow itself go before the node.", spec.Type)}
		default:
			k, v, ok := strings.Cut(a, "=")
			if !ok || !ValidParamName(k) {
				return nil, &pferr.Error{Kind: pferr.Usage,
					Message: fmt.Sprintf("argument %q after node '%s' is not a parameter", a, spec.Type),
					Hint:    fmt.Sprintf("Write params as --name=value or name=value (see 'pflow %s --help'); to link nodes, put '>>' between them as one argument (quoted: '>>').", spec.Type)}
			}
			key, raw, hasValue = k, v, true
		}
		f, known := paramField(spec, key)
		if !known {
			if !spec.Interface.ExtraParams || !ValidParamName(key) {
				return nil, unknownNodeParam(spec, key)
			}
		} else {
			key = f.Key
		}
		if !hasValue {
			next := ""
			if i+1 < len(args) {
				next = args[i+1]
			}
			isBool := known && value.CanonicalType(f.Type) == "bool"
			switch {
			case isBool && (next == "" || strings.HasPrefix(next, "--") || !isBoolWord(next)):
				raw = "true"
			case i+1 < len(args) && next != ChainSeparator:
				raw = next
				i++
			default:
				return nil, &pferr.Error{Kind: pferr.Usage,
					Message: fmt.Sprintf("parameter --%s of node '%s' has no value", key, spec.Type),
					Hint:    fmt.Sprintf("Write --%s=<value> (see 'pflow %s --help').", key, spec.Type)}
			}
		}
		v, err := NodeParamValue(f, key, raw)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

func isBoolWord(s string) bool {
	_, err := strconv.ParseBool(s)
	return err == nil
}

// paramField finds a declared param by key, or by key with '-' read as '_'.
func paramField(spec *node.Spec, key string) (node.Field, bool) {
	if f, ok := spec.Interface.Param(key); ok {
		return f, true
	}
	return spec.Interface.Param(strings.ReplaceAll(key, "-", "_"))
}

func unknownNodeParam(spec *node.Spec, key string) error {
	var names []string
	for _, p := range spec.Interface.Params {
		names = append(names, p.Key)
	}
	msg := fmt.Sprintf("unknown parameter --%s for node '%s'", key, spec.Type)
	if slices.Contains(RunnerFlagNames, key) {
		return &pferr.Error{Kind: pferr.Usage, Message: msg + fmt.Sprintf(": --%s is a flag of pflow itself, and flags go before the node", key),
			Hint: fmt.Sprintf("Move it in front, e.g. pflow --%s ... %s --param=value", key, spec.Type)}
	}
	if s := suggest.Closest(strings.ReplaceAll(key, "-", "_"), names, 1, 0.4); len(s) > 0 {
		msg += fmt.Sprintf(" — did you mean --%s?", s[0])
	}
	flags := make([]string, len(names))
	for i, n := range names {
		flags[i] = "--" + n
	}
	hint := "This node takes no parameters."
	if len(flags) > 0 {
		hint = "Its parameters: " + strings.Join(flags, ", ") + "."
	}
	return &pferr.Error{Kind: pferr.Usage, Message: msg, Details: map[string]any{"params": names},
		Hint: hint + fmt.Sprintf(" Run 'pflow %s --help' for what each one does.", spec.Type)}
}

// NodeParamValue reads one command-line value for param f (key as given
// when f is not declared): '@path' is the file's content ('@@' a literal
// '@'), then the text is read by the declared type. A value that does not
// fit its type is kept as text, so validation reports it as it does in a
// workflow.
func NodeParamValue(f node.Field, key, raw string) (any, error) {
	switch {
	case strings.HasPrefix(raw, "@@"):
		raw = raw[1:]
	case strings.HasPrefix(raw, "@") && len(raw) > 1:
		path := raw[1:]
		data, err := os.ReadFile(path)
		if err != nil {
			why := err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				why = "no such file"
			}
			return nil, &pferr.Error{Kind: pferr.Usage,
				Message: fmt.Sprintf("--%s=@%s: cannot read the file: %s", key, path, why),
				Hint:    "A value starting with '@' is read from that file (relative to the current directory); write '@@' for a value that starts with a literal '@'."}
		}
		if !utf8.Valid(data) {
			return nil, &pferr.Error{Kind: pferr.Usage,
				Message: fmt.Sprintf("--%s=@%s: the file is binary (not UTF-8 text)", key, path),
				Hint:    "Pass the file's path to a param that reads files instead (e.g. read-file --file_path)."}
		}
		raw = string(data)
		if f.Key != "" && value.CanonicalType(f.Type) != "str" {
			raw = strings.TrimSpace(raw)
		}
	}
	if f.Key == "" {
		return InferType(raw), nil
	}
	switch value.CanonicalType(f.Type) {
	case "str":
		return raw, nil
	case "int":
		if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return i, nil
		}
	case "float":
		if isPlainInt(raw) {
			if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
				return i, nil
			}
		}
		if x, err := strconv.ParseFloat(raw, 64); err == nil {
			return x, nil
		}
	case "bool":
		if b, err := strconv.ParseBool(raw); err == nil {
			return b, nil
		}
	case "dict", "list":
		if v, ok := value.TryParseContainer(raw); ok {
			return v, nil
		}
	default:
		return InferType(raw), nil
	}
	return raw, nil
}

// NodeStepID is the step id a node call runs under: its type without the
// "mcp-" prefix (the step name 'registry describe' snippets use).
func NodeStepID(s *node.Spec) string { return strings.TrimPrefix(s.Type, "mcp-") }

// NodeWorkflow builds the linear workflow of calls: one step per call, in
// order, each named after its node type (a repeated type gets -2, -3),
// each step's main input fed from the previous step's main output unless
// the command line gave it. Param values are literal: a "${" in them
// reaches the node as typed. With stdin the workflow declares the input
// ChainInput (marked stdin) that feeds the first node's main input. The
// last step's main output is the workflow's output "result".
func NodeWorkflow(calls []NodeCall, stdin bool) (*workflow.Workflow, error) {
	if len(calls) == 0 {
		return nil, pferr.New(pferr.Usage, "no node to run").WithHint("Name a node type, e.g. pflow shell --command='echo hi'.")
	}
	w := &workflow.Workflow{}
	seen := map[string]int{}
	var types []string
	for i, c := range calls {
		id := NodeStepID(c.Spec)
		seen[id]++
		if n := seen[id]; n > 1 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
		params := make(map[string]any, len(c.Params)+1)
		for k, v := range c.Params {
			params[k] = escapeTemplates(v)
		}
		main := c.Spec.StdinParam
		_, given := c.Params[main]
		switch {
		case i == 0 && stdin:
			if main == "" {
				return nil, noMainInput(c.Spec, "piped input")
			}
			if !given {
				params[main] = "${" + ChainInput + "}"
				w.Inputs = append(w.Inputs, &workflow.Input{Name: ChainInput, Type: "string", Stdin: true,
					Description: fmt.Sprintf("Text for %s's %s (piped stdin).", c.Spec.Type, main)})
			}
		case i > 0 && !given:
			prev := w.Nodes[i-1]
			if main == "" {
				return nil, noMainInput(c.Spec, fmt.Sprintf("the output of '%s' (node %d of the chain)", prev.Type, i))
			}
			out := calls[i-1].Spec.MainOutput
			if out == "" {
				return nil, &pferr.Error{Kind: pferr.Usage,
					Message: fmt.Sprintf("node '%s' (node %d of the chain) has no main output to pass on to '%s'", prev.Type, i, c.Spec.Type),
					Hint:    fmt.Sprintf("Give '%s' its --%s explicitly, or start a new command after '%s'.", c.Spec.Type, main, prev.Type)}
			}
			params[main] = "${" + prev.ID + "." + out + "}"
		}
		n := &workflow.Node{ID: id, Type: c.Spec.Type, Params: params,
			Purpose: strings.TrimSuffix(firstSentence(c.Spec.Interface.Description), ".") + "."}
		if i > 0 {
			w.Edges = append(w.Edges, workflow.Edge{From: w.Nodes[i-1].ID, To: id})
		}
		w.Nodes = append(w.Nodes, n)
		types = append(types, c.Spec.Type)
	}
	last := calls[len(calls)-1].Spec
	if last.MainOutput != "" {
		w.Outputs = append(w.Outputs, &workflow.Output{Name: "result", Source: "${" + w.Nodes[len(w.Nodes)-1].ID + "." + last.MainOutput + "}",
			Description: fmt.Sprintf("The %s of %s.", last.MainOutput, last.Type)})
	}
	w.Source = &workflow.Source{Title: strings.Join(types, " >> "),
		Description: "Runs " + strings.Join(types, ", then ") + ", each step's main output feeding the next one's main input."}
	w.Normalize()
	return w, nil
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func noMainInput(s *node.Spec, what string) error {
	return &pferr.Error{Kind: pferr.Usage,
		Message: fmt.Sprintf("node '%s' has no main input, so %s has nowhere to go", s.Type, what),
		Hint:    fmt.Sprintf("Pass its params as flags instead (see 'pflow %s --help'), or put a node that reads input (shell's --stdin, llm's --prompt, write-file's --content) there.", s.Type),
		Fixes:   []pferr.Fix{{Text: "To see its params, {do}.", Do: pferr.DescribeNode(s.Type)}}}
}

// NodeRunRequest is a node call or a '>>' chain as typed on the command
// line.
type NodeRunRequest struct {
	// Segments are the calls in order: each a node name, then its params.
	Segments [][]string
	// Stdin is piped data (nil when stdin is a terminal or not piped): it
	// fills the first node's main input. Read only when that input is not
	// given on the command line.
	Stdin io.Reader
}

// NodeTarget resolves the calls of req to node types, reads their params
// by each node's schema and builds their linear workflow (NodeWorkflow).
// It returns the target and its run params (the piped text as ChainInput).
func (a *App) NodeTarget(ctx context.Context, req NodeRunRequest) (*Target, map[string]any, error) {
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	var calls []NodeCall
	for i, seg := range req.Segments {
		if len(seg) == 0 {
			return nil, nil, &pferr.Error{Kind: pferr.Usage,
				Message: fmt.Sprintf("node %d of the chain is missing: '%s' must stand between two node calls", i+1, ChainSeparator),
				Hint:    "Write pflow a --x=1 '>>' b --y=2 (no '>>' at the start or end, none doubled)."}
		}
		spec, err := LookupNodeType(cat, seg[0])
		if err != nil {
			if len(req.Segments) > 1 {
				pe := *pferr.As(err)
				pe.Message += fmt.Sprintf(" (node %d of the chain; a chain links node types, not saved workflows)", i+1)
				return nil, nil, &pe
			}
			return nil, nil, err
		}
		params, err := ParseNodeArgs(spec, seg[1:])
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, NodeCall{Spec: spec, Params: params})
	}
	runParams := map[string]any{}
	piped := ""
	hasStdin := false
	if req.Stdin != nil {
		first := calls[0]
		if _, given := first.Params[first.Spec.StdinParam]; !given || first.Spec.StdinParam == "" {
			data, err := io.ReadAll(req.Stdin)
			if err != nil {
				return nil, nil, &pferr.Error{Kind: pferr.Usage, Message: "could not read piped input: " + err.Error()}
			}
			if len(data) > 0 {
				if !utf8.Valid(data) {
					return nil, nil, &pferr.Error{Kind: pferr.Usage,
						Message: fmt.Sprintf("piped input is binary (not UTF-8 text) and cannot fill %s's --%s", first.Spec.Type, first.Spec.StdinParam),
						Hint:    "Save it to a file and pass the path as a parameter instead."}
				}
				// Kept exactly: a node's input is data (write-file
				// writes it byte for byte), not a typed value.
				piped, hasStdin = string(data), true
			}
		}
	}
	w, err := NodeWorkflow(calls, hasStdin)
	if err != nil {
		return nil, nil, err
	}
	if hasStdin {
		runParams[ChainInput] = piped
	}
	return &Target{Workflow: w, Name: NodeStepID(calls[0].Spec)}, runParams, nil
}

// SaveNodeWorkflow stores a workflow NodeWorkflow built (a node call or
// chain) in the library as name: the ordinary .pflow.md of its steps,
// after every static check a save does.
func (a *App) SaveNodeWorkflow(ctx context.Context, w *workflow.Workflow, name string, force bool) (*SaveOutcome, error) {
	if err := library.ValidateName(name); err != nil {
		return nil, err
	}
	md, err := workflow.FormatMarkdown(w)
	if err != nil {
		return nil, pferr.Newf(pferr.Validation, "cannot save '%s': %v", name, err)
	}
	lib := a.Library()
	if !force && lib.Exists(name) {
		return nil, &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("Workflow '%s' already exists", name), Where: lib.Path(name),
			Hint: "Choose another --save name, or delete it first ('pflow workflow delete " + name + "')."}
	}
	return a.saveWorkflow(ctx, w, md, name, name+library.Ext, library.SaveOptions{Force: force})
}

// CheckSaveName fails when name cannot be used to save a node call or
// chain (invalid, or taken), before anything runs.
func (a *App) CheckSaveName(name string) error {
	if err := library.ValidateName(name); err != nil {
		return err
	}
	if lib := a.Library(); lib.Exists(name) {
		return &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("cannot save as '%s': a saved workflow of that name already exists", name), Where: lib.Path(name),
			Hint: "Choose another --save name, or delete it first ('pflow workflow delete " + name + "')."}
	}
	return nil
}
