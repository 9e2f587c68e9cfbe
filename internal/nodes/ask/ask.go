// Package ask implements the `ask` node: a step that asks a person and
// routes on the answer. It reaches the person through the run's
// node.Asker (a terminal, the MCP client that started the run, an answer
// stored with `pflow runs answer`); when the run has none, it returns
// node.WaitingError and the runtime pauses the run (status "waiting").
package ask

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// Type is the node type.
const Type = "ask"

// Actions the step takes besides one per choice.
const (
	ActionApproved = "approved" // the choice approve
	ActionDenied   = "denied"   // the choice deny
	ActionTimeout  = "timeout"  // nobody answered within timeout and there is no default
)

// Channels of an answer (node.Answer.Channel).
const (
	ChannelTerminal   = "terminal"
	ChannelMCPClient  = "mcp-client"
	ChannelRunsAnswer = "runs-answer"
	ChannelTimeout    = "timeout"
	ChannelTemporal   = "temporal-signal"
)

// DefaultChoices are the choices of a step that names none.
var DefaultChoices = []string{"approve", "deny"}

// Spec returns the ask node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:        Type,
		Group:       "ask",
		Interface:   iface,
		Attempts:    1,
		Node:        node.Func(run),
		MainOutput:  "choice",
		Check:       check,
		StepActions: StepActions,
		// On Temporal the question waits for a signal to the run's own
		// workflow: the step runs in workflow code, not as an activity.
		Inline: true,
		// Asking again is harmless (a resume re-asks a question whose answer
		// was not recorded); an answer is never served from the step cache.
		Effects: node.Effects{ReadOnly: true, Idempotent: true},
	}
}

var iface = node.Interface{
	Description: "Ask a person and route on the answer: on a terminal it prompts, under `pflow mcp serve` it asks the " +
		"calling client (elicitation), on Temporal the run waits for `pflow runs answer --temporal <host>`, otherwise the run pauses " +
		"with status waiting until `pflow runs answer <run> <choice>`. " +
		"Its action is the answer: approved (approve), denied (deny), the choice's name for other choices, timeout.",
	Params: []node.Field{
		{Key: "message", Type: "str", Required: true, Also: []string{"question", "prompt", "text", "title"}, Description: "The question, with the values it is about to act on (templates are filled in)."},
		{Key: "choices", Type: "list[str]", Also: []string{"options", "answers", "buttons", "actions"}, Default: []any{"approve", "deny"}, Description: "The choices the person picks from: names of lowercase letters, digits, '-' and '_'."},
		{Key: "schema", Type: "dict", Description: "Typed input to ask for as well: a flat JSON schema object ({type: object, properties: {name: {type: string}}, required: [name]}); properties are string, number, integer or boolean."},
		{Key: "timeout", Type: "str", Description: "How long to wait for a person who is being asked (seconds or a duration: 30, 10m); a paused run waits until answered."},
		{Key: "default", Type: "str", Description: "The choice taken when the timeout passes (without it the step takes the timeout action)."},
		{Key: "who", Type: "str", Also: []string{"approver", "assignee", "approvers"}, Description: "Who may answer (a person or role), shown with the question."},
	},
	Outputs: []node.Field{
		{Key: "choice", Type: "str", Description: "The choice picked (the default on a timeout; empty on a timeout without default)."},
		{Key: "input", Type: "dict", Description: "The typed input given for schema (empty when none was asked)."},
		{Key: "answered_by", Type: "str", Description: "Who answered: the user on a terminal or with pflow runs answer, mcp-client, or timeout."},
		{Key: "channel", Type: "str", Description: "How the answer came: terminal, mcp-client, runs-answer, temporal-signal or timeout."},
		{Key: "answered_at", Type: "str", Description: "When the answer came (RFC 3339)."},
		{Key: "question", Type: "str", Description: "The message as it was asked."},
	},
	Actions: []string{ActionApproved, ActionDenied, ActionTimeout},
}

// ActionOf is the action a choice routes on.
func ActionOf(choice string) string {
	switch choice {
	case "approve":
		return ActionApproved
	case "deny":
		return ActionDenied
	}
	return choice
}

// StepActions are the actions a step with params can take: one per choice,
// and timeout.
func StepActions(params map[string]any) []string {
	choices, err := Choices(params)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(choices)+1)
	for _, c := range choices {
		out = append(out, ActionOf(c))
	}
	return append(out, ActionTimeout)
}

// reserved reports whether a choice would route on an action the step has
// already.
func reserved(c string) bool {
	switch c {
	case "default", "error", "timeout", "waiting":
		return true
	}
	return false
}

// Choices reads the step's choices (the default when unset).
func Choices(params map[string]any) ([]string, error) {
	v, ok := params["choices"]
	if !ok || v == nil {
		return slices.Clone(DefaultChoices), nil
	}
	var list []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			s, isStr := e.(string)
			if !isStr {
				return nil, &node.ParamError{Param: "choices", Message: fmt.Sprintf("expects a list of names, got an item %s", value.TypeName(e))}
			}
			list = append(list, strings.TrimSpace(s))
		}
	case []string:
		list = slices.Clone(x)
	case string:
		if p, ok := value.TryParseContainer(x); ok {
			return Choices(map[string]any{"choices": p})
		}
		for _, s := range strings.Split(x, ",") {
			list = append(list, strings.TrimSpace(s))
		}
	default:
		return nil, &node.ParamError{Param: "choices", Message: "expects a list of names, e.g. [approve, deny]"}
	}
	if len(list) == 0 {
		return nil, &node.ParamError{Param: "choices", Message: "is empty: give at least one choice, e.g. [approve, deny]"}
	}
	seen := map[string]bool{}
	for _, c := range list {
		if !validName(c) {
			return nil, &node.ParamError{Param: "choices", Message: fmt.Sprintf("choice %q is not a name: use lowercase letters, digits, '-' and '_', starting with a letter", c)}
		}
		if reserved(c) {
			return nil, &node.ParamError{Param: "choices", Message: fmt.Sprintf("choice %q is an action the step has already: pick another name", c)}
		}
		a := ActionOf(c)
		if seen[a] {
			return nil, &node.ParamError{Param: "choices", Message: fmt.Sprintf("choice %q routes on action '%s', as another choice does: pick another name", c, a)}
		}
		seen[a] = true
	}
	return list, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Schema reads the step's schema (nil when unset) and checks its shape.
func Schema(params map[string]any) (map[string]any, error) {
	s, err := node.Map(params, "schema")
	if err != nil || s == nil {
		return nil, err
	}
	bad := func(msg string) error { return &node.ParamError{Param: "schema", Message: msg} }
	if t, ok := s["type"]; ok && t != "object" {
		return nil, bad(fmt.Sprintf("must be an object schema (type: object), got type %v", t))
	}
	props, ok := s["properties"].(map[string]any)
	if !ok || len(props) == 0 {
		return nil, bad("needs properties: {<name>: {type: string|number|integer|boolean}}")
	}
	for name, p := range props {
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, bad(fmt.Sprintf("property '%s' must be a schema object ({type: string})", name))
		}
		switch t, _ := pm["type"].(string); t {
		case "string", "number", "integer", "boolean":
		default:
			return nil, bad(fmt.Sprintf("property '%s' has type %q: only string, number, integer and boolean can be asked (no nesting)", name, t))
		}
	}
	if r, ok := s["required"]; ok {
		list, isList := r.([]any)
		if !isList {
			return nil, bad("required must be a list of property names")
		}
		for _, e := range list {
			if _, ok := props[value.Stringify(e)]; !ok {
				return nil, bad(fmt.Sprintf("required names '%v', which is not a property", e))
			}
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if r, ok := s["required"]; ok {
		out["required"] = r
	}
	return out, nil
}

// Properties lists a schema's properties in order (required first, then by
// name), for prompting.
func Properties(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	req := Required(schema)
	names := value.SortedKeys(props)
	slices.SortStableFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(req, a), slices.Contains(req, b)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	return names
}

// Required lists a schema's required properties.
func Required(schema map[string]any) []string {
	var out []string
	if list, ok := schema["required"].([]any); ok {
		for _, e := range list {
			out = append(out, value.Stringify(e))
		}
	}
	return out
}

// PropType is a schema property's type ("string" when unknown).
func PropType(schema map[string]any, name string) string {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	if t, ok := p["type"].(string); ok {
		return t
	}
	return "string"
}

// CoerceInput checks input against schema: every key is a property, every
// required property is given, and each value has (or, given as text, is
// read as) the property's type. A nil schema takes no input.
func CoerceInput(schema map[string]any, input map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if schema == nil {
		if len(input) > 0 {
			return nil, errors.New("this question asks for no input")
		}
		return out, nil
	}
	props, _ := schema["properties"].(map[string]any)
	for _, k := range value.SortedKeys(input) {
		if _, ok := props[k]; !ok {
			return nil, fmt.Errorf("input '%s' is not asked for; the question asks for: %s", k, strings.Join(Properties(schema), ", "))
		}
		v, err := coerce(PropType(schema, k), input[k])
		if err != nil {
			return nil, fmt.Errorf("input '%s': %v", k, err)
		}
		if p, _ := props[k].(map[string]any); p != nil {
			if enum, ok := p["enum"].([]any); ok && len(enum) > 0 && !slices.ContainsFunc(enum, func(e any) bool { return value.Stringify(e) == value.Stringify(v) }) {
				return nil, fmt.Errorf("input '%s' must be one of %s", k, value.Stringify(enum))
			}
		}
		out[k] = v
	}
	for _, k := range Required(schema) {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("input '%s' is required", k)
		}
	}
	return out, nil
}

// CoerceValue reads v (text typed by a person, or a JSON value) as schema
// property name's type.
func CoerceValue(schema map[string]any, name string, v any) (any, error) {
	return coerce(PropType(schema, name), v)
}

func coerce(typ string, v any) (any, error) {
	s, isStr := v.(string)
	switch typ {
	case "string":
		if isStr {
			return s, nil
		}
		return value.Stringify(v), nil
	case "boolean":
		b, err := node.Bool(map[string]any{"v": v}, "v", false)
		if err != nil {
			return nil, errors.New("expects true or false")
		}
		return b, nil
	case "integer", "number":
		if isStr {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return nil, fmt.Errorf("expects a number, got %q", s)
			}
			v = f
		}
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		case int:
			f = float64(x)
		default:
			return nil, fmt.Errorf("expects a number, got %s", value.TypeName(v))
		}
		if typ == "integer" {
			if f != math.Trunc(f) {
				return nil, fmt.Errorf("expects a whole number, got %v", f)
			}
			return int64(f), nil
		}
		return f, nil
	}
	return v, nil
}

// CheckAnswer checks that a answers q: its choice is one of q's choices
// and its input fits q's schema (coerced to its types).
func CheckAnswer(q node.Question, a node.Answer) (node.Answer, error) {
	if len(q.Choices) > 0 && !slices.Contains(q.Choices, a.Choice) {
		return a, fmt.Errorf("'%s' is not a choice of this question; choose one of: %s", a.Choice, strings.Join(q.Choices, ", "))
	}
	in, err := CoerceInput(q.Schema, a.Input)
	if err != nil {
		return a, err
	}
	a.Input = in
	return a, nil
}

func check(_ context.Context, params map[string]any) []node.Problem {
	var out []node.Problem
	add := func(param string, err error) {
		msg := err.Error()
		var pe *node.ParamError
		if errors.As(err, &pe) {
			msg = pe.Message
		}
		out = append(out, node.Problem{Param: param, Message: "'" + param + "' " + msg})
	}
	choices, err := Choices(params)
	if err != nil && !template.HasTemplate(params["choices"]) {
		add("choices", err)
	}
	if _, err := Schema(params); err != nil && !template.HasTemplate(params["schema"]) {
		add("schema", err)
	}
	if _, err := node.Duration(params, "timeout", 0); err != nil && !template.HasTemplate(params["timeout"]) {
		add("timeout", err)
	}
	if d, ok := params["default"].(string); ok && choices != nil && !template.HasTemplate(d) && !slices.Contains(choices, d) {
		out = append(out, node.Problem{Param: "default", Message: fmt.Sprintf("'default' is %q, which is not one of the choices (%s)", d, strings.Join(choices, ", "))})
	}
	if _, ok := params["cache"]; ok {
		out = append(out, node.Problem{Param: "cache", Message: "an answer is never served from the step cache: remove 'cache'"})
	}
	return out
}

// Question is the question a step with params asks.
func Question(id string, params map[string]any) (node.Question, error) {
	msg, err := node.RequireString(params, "message")
	if err != nil {
		return node.Question{}, err
	}
	choices, err := Choices(params)
	if err != nil {
		return node.Question{}, err
	}
	schema, err := Schema(params)
	if err != nil {
		return node.Question{}, err
	}
	return node.Question{ID: id, Message: msg, Choices: choices, Schema: schema, From: "step " + id, Who: node.String(params, "who", "")}, nil
}

func run(ctx context.Context, req *node.Request) (*node.Result, error) {
	q, err := Question(req.NodeID, req.Params)
	if err != nil {
		return nil, err
	}
	timeout, err := node.Duration(req.Params, "timeout", 0)
	if err != nil {
		return nil, err
	}
	def := node.String(req.Params, "default", "")
	if def != "" && !slices.Contains(q.Choices, def) {
		return nil, &node.ParamError{Param: "default", Message: fmt.Sprintf("is %q, which is not one of the choices (%s)", def, strings.Join(q.Choices, ", "))}
	}
	asker := node.AskerFrom(ctx)
	if asker == nil {
		return nil, &node.WaitingError{Question: q}
	}
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ans, err := asker.Ask(actx, q)
	switch {
	case err == nil:
	case errors.Is(err, node.ErrNoAsker):
		return nil, &node.WaitingError{Question: q}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case timeout > 0 && (actx.Err() != nil || errors.Is(err, context.DeadlineExceeded)):
		if def == "" {
			return &node.Result{Outputs: outputs(q, node.Answer{Channel: ChannelTimeout}), Action: ActionTimeout}, nil
		}
		ans = node.Answer{Choice: def, Channel: ChannelTimeout}
	default:
		return nil, fmt.Errorf("could not ask: %w", err)
	}
	ans, err = CheckAnswer(q, ans)
	if err != nil {
		return node.Fail(fmt.Sprintf("step '%s': the answer does not fit the question: %v", req.NodeID, err), outputs(q, ans)), nil
	}
	return &node.Result{Outputs: outputs(q, ans), Action: ActionOf(ans.Choice)}, nil
}

func outputs(q node.Question, a node.Answer) map[string]any {
	in := a.Input
	if in == nil {
		in = map[string]any{}
	}
	by := a.Channel
	switch a.Channel {
	case ChannelTerminal, ChannelRunsAnswer:
		by = UserName()
	}
	at := a.At
	if at.IsZero() {
		at = time.Now()
	}
	return map[string]any{
		"choice": a.Choice, "input": in, "answered_by": by, "channel": a.Channel,
		"answered_at": at.UTC().Format(time.RFC3339), "question": q.Message,
	}
}

// UserName is the user this process runs as (who answers on a terminal or
// with pflow runs answer).
var UserName = sync.OnceValue(func() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
})
