// Package cond compiles and evaluates the conditions of a workflow: a step's
// `when` and the cases of a `switch` step. A condition is an expression of
// github.com/expr-lang/expr (side-effect free, always terminates) over the
// run's data, which it reads with the same ${...} templates as params.
//
// Template values are data, never expression source: each ${...} becomes a
// variable of the compiled program, bound to the value when the condition
// is evaluated. Two conveniences make step outputs easy to compare:
//
//   - text compared with a number is read as a number when it is one
//     ("3\n" from a shell step's stdout is 3);
//   - text compared with text ignores surrounding whitespace (stdout's
//     trailing newline does not count).
//
// empty(x) is true for null, blank text, an empty list and an empty object.
// A ${...} that does not resolve is an error, unless it is the left side of
// the ?? operator, which gives a default: ${maybe.stdout} ?? "".
package cond

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// Expr is a compiled condition.
type Expr struct {
	// Source is the condition as written.
	Source string
	// Refs are the distinct top-level template references, in order.
	Refs []template.Ref
	// Defaulted[i] is true when Refs[i] has a ?? default.
	Defaulted []bool
	// Ops are the binary operations whose operands are template values or
	// literals, for validation to check them against the values' types.
	Ops  []Op
	vars []string
	prog *vm.Program
}

// Op is one binary operation of a condition.
type Op struct {
	Operator    string
	Left, Right Operand
}

// Operand is a side of an Op: a template value (Ref >= 0, an index into
// Expr.Refs) or a literal (Kind "number", "text", "bool", "null"), else
// Kind "" and Ref -1.
type Operand struct {
	Ref  int
	Kind string
}

func operand(n ast.Node, vars map[string]int) Operand {
	switch t := n.(type) {
	case *ast.IdentifierNode:
		if i, ok := vars[t.Value]; ok {
			return Operand{Ref: i}
		}
	case *ast.IntegerNode, *ast.FloatNode:
		return Operand{Ref: -1, Kind: "number"}
	case *ast.StringNode:
		return Operand{Ref: -1, Kind: "text"}
	case *ast.BoolNode:
		return Operand{Ref: -1, Kind: "bool"}
	case *ast.NilNode:
		return Operand{Ref: -1, Kind: "null"}
	}
	return Operand{Ref: -1}
}

// Error is a condition that does not compile, with the fix.
type Error struct {
	Message string
	Fix     string
}

func (e *Error) Error() string {
	if e.Fix == "" {
		return e.Message
	}
	return e.Message + " " + e.Fix
}

const varPrefix = "_pflow_v"

// compiled caches programs by source: a workflow's conditions are compiled
// once per process, whatever the number of runs or loop turns. A
// long-lived process (pflow mcp serve) keeps at most maxCached of them.
var (
	compiled    sync.Map // string → *Expr
	cachedCount atomic.Int64
)

const maxCached = 4096

// Compile compiles a condition. Its error is an *Error.
func Compile(src string) (*Expr, error) {
	if x, ok := compiled.Load(src); ok {
		return x.(*Expr), nil
	}
	x, err := compile(src)
	if err != nil {
		return nil, err
	}
	if cachedCount.Load() < maxCached {
		if _, loaded := compiled.LoadOrStore(src, x); !loaded {
			cachedCount.Add(1)
		}
	}
	return x, nil
}

func compile(src string) (*Expr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Message: "the condition is empty.", Fix: "Write an expression over the run's data, e.g. '${count.stdout} > 0'."}
	}
	x := &Expr{Source: src}
	index := map[string]int{}
	var code strings.Builder
	for _, p := range template.Parts(src) {
		if p.Ref == nil {
			code.WriteString(p.Text)
			continue
		}
		i, ok := index[p.Ref.Raw]
		if !ok {
			i = len(x.Refs)
			index[p.Ref.Raw] = i
			x.Refs = append(x.Refs, *p.Ref)
			x.vars = append(x.vars, varPrefix+strconv.Itoa(i+1))
		}
		code.WriteString(" " + x.vars[i] + " ")
	}
	source := code.String()
	tree, err := parser.Parse(source)
	if err != nil {
		fix := "Compare values with ==, !=, <, >, <=, >=, combine with and, or, not; e.g. '${count.stdout} > 0 and ${mode} == \"full\"'."
		if j := singleEquals(src); j >= 0 {
			fix = "'=' is not a comparison: write '==' (" + src[:j] + "==" + src[j+1:] + ")."
		}
		return nil, &Error{Message: fmt.Sprintf("the condition %q is not a valid expression: %s.", src, firstLine(err.Error(), x)), Fix: fix}
	}
	v := &inspector{paths: map[ast.Node]string{}, vars: map[string]int{}, declared: map[string]bool{}, seen: map[string]bool{},
		defaulted: map[string]bool{}, callees: map[ast.Node]bool{}, collect: true}
	for i, name := range x.vars {
		v.vars[name] = i
	}
	ast.Walk(&tree.Node, v)
	v.collect = false
	ast.Walk(&tree.Node, v)
	if v.bad != nil {
		return nil, v.bad
	}
	for i, name := range x.vars {
		if !v.seen[name] {
			return nil, &Error{Message: fmt.Sprintf("in the condition %q, %s stands inside quotes, so it is text, not the value.", src, x.Refs[i].Raw),
				Fix: fmt.Sprintf("Compare the value itself: %s == \"text\".", x.Refs[i].Raw)}
		}
	}
	x.Ops = v.ops
	x.Defaulted = make([]bool, len(x.vars))
	for i, name := range x.vars {
		x.Defaulted[i] = v.defaulted[name]
	}
	// The values' types are known only at run time: the variables are
	// declared as any (an env map without them), so the checker lets each
	// operator decide when the condition runs.
	prog, err := expr.Compile(source, expr.Env(map[string]any{}), expr.AllowUndefinedVariables(), expr.DisableBuiltin("now"),
		expr.Function("empty", empty), expr.Function("_num", num), expr.Function("_trim", trim),
		expr.Patch(coercer{vars: v.vars}))
	if err != nil {
		return nil, &Error{Message: fmt.Sprintf("the condition %q does not compile: %s.", src, firstLine(err.Error(), x)),
			Fix: "Use the expression operators (==, !=, <, >, and, or, not, contains, in, ??) and functions (len, empty, lower, upper, trim)."}
	}
	x.prog = prog
	return x, nil
}

// firstLine keeps the first line of an expr error and names templates
// instead of their variables.
func firstLine(msg string, x *Expr) string {
	msg, _, _ = strings.Cut(msg, "\n")
	for i := len(x.vars) - 1; i >= 0; i-- {
		msg = strings.ReplaceAll(msg, x.vars[i], x.Refs[i].Raw)
	}
	msg = strings.ReplaceAll(msg, "_num(", "(")
	msg = strings.ReplaceAll(msg, "_trim(", "(")
	// Positions count in the compiled text, not in what the user wrote.
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") && strings.Contains(msg[i:], ":") {
		msg = msg[:i]
	}
	return strings.TrimSuffix(strings.TrimSpace(msg), ".")
}

// inspector refuses names that are not template values or functions, and
// notes which values have a ?? default. It walks twice: the first pass
// (collect) finds function names and let-declared names, the second checks
// every identifier.
type inspector struct {
	// paths holds, for an identifier that is the root of a member chain
	// (find.stdout), the whole chain, so a message can show ${find.stdout}.
	paths     map[ast.Node]string
	vars      map[string]int
	declared  map[string]bool
	seen      map[string]bool
	defaulted map[string]bool
	callees   map[ast.Node]bool
	collect   bool
	ops       []Op
	bad       *Error
}

// functions are the functions a condition may call besides expr's
// builtins (which the parser turns into builtin nodes).
var functions = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{"empty": true}
	for _, n := range builtin.Names {
		m[n] = true
	}
	delete(m, "now") // the clock would make a condition differ on replay
	return m
})

func (v *inspector) Visit(n *ast.Node) {
	if v.collect {
		switch t := (*n).(type) {
		case *ast.CallNode:
			v.callees[t.Callee] = true
		case *ast.VariableDeclaratorNode:
			v.declared[t.Name] = true
		case *ast.MemberNode:
			if root, path, ok := memberPath(t); ok {
				v.paths[root] = path
			}
		case *ast.BinaryNode:
			if id, ok := t.Left.(*ast.IdentifierNode); ok && t.Operator == "??" {
				v.defaulted[id.Value] = true
			}
			l, r := operand(t.Left, v.vars), operand(t.Right, v.vars)
			if l.Ref >= 0 || r.Ref >= 0 {
				v.ops = append(v.ops, Op{Operator: t.Operator, Left: l, Right: r})
			}
		}
		return
	}
	if v.bad != nil {
		return
	}
	switch t := (*n).(type) {
	case *ast.BuiltinNode:
		if !functions()[t.Name] {
			v.bad = &Error{Message: fmt.Sprintf("a condition cannot call %s().", t.Name),
				Fix: "A condition reads only the run's data, so it gives the same answer when a run is resumed or replayed; read the time in a shell step ('date +%s') and compare its output."}
		}
	case *ast.IdentifierNode:
		if _, ok := v.vars[t.Value]; ok {
			v.seen[t.Value] = true
			return
		}
		if v.callees[*n] {
			if !functions()[t.Value] {
				v.bad = &Error{Message: fmt.Sprintf("a condition has no function %s().", t.Value),
					Fix: "Use empty, len, lower, upper, trim, hasPrefix, hasSuffix, contains, in, or compute the value in a shell or code step."}
			}
			return
		}
		if v.declared[t.Value] {
			return
		}
		if path, ok := v.paths[*n]; ok {
			v.bad = &Error{Message: fmt.Sprintf("'%s' is not a value a condition can read.", path),
				Fix: fmt.Sprintf("Read data with a template: ${%s}.", path)}
			return
		}
		v.bad = &Error{Message: fmt.Sprintf("'%s' is not a value a condition can read.", t.Value),
			Fix: fmt.Sprintf("Read data with a template: ${%s} for an input, ${<step>.<output>} for a step's output; quote text: \"%s\".", t.Value, t.Value)}
	}
}

// memberPath renders a chain of member accesses on an identifier
// (find.stdout, a.b[0]) and returns its root identifier.
func memberPath(m *ast.MemberNode) (ast.Node, string, bool) {
	var suffix string
	var cur ast.Node = m
	for {
		switch t := cur.(type) {
		case *ast.MemberNode:
			switch p := t.Property.(type) {
			case *ast.StringNode:
				suffix = "." + p.Value + suffix
			case *ast.IntegerNode:
				suffix = fmt.Sprintf("[%d]", p.Value) + suffix
			default:
				return nil, "", false
			}
			cur = t.Node
		case *ast.IdentifierNode:
			return t, t.Value + suffix, true
		default:
			return nil, "", false
		}
	}
}

// coercer wraps the template values of a comparison so that text and
// numbers compare the way a reader expects (see the package doc).
type coercer struct{ vars map[string]int }

func (c coercer) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok {
		return
	}
	switch b.Operator {
	case "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "**", "^":
		c.wrap(&b.Left, "_num")
		c.wrap(&b.Right, "_num")
	case "==", "!=":
		fn := "_trim"
		if isNumber(b.Left) || isNumber(b.Right) {
			fn = "_num"
		}
		c.wrap(&b.Left, fn)
		c.wrap(&b.Right, fn)
	}
}

func (c coercer) wrap(n *ast.Node, fn string) {
	id, ok := (*n).(*ast.IdentifierNode)
	if !ok {
		return
	}
	if _, ours := c.vars[id.Value]; !ours {
		return
	}
	ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: []ast.Node{id}})
}

func isNumber(n ast.Node) bool {
	switch t := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		return true
	case *ast.UnaryNode:
		return t.Operator == "-" && isNumber(t.Node)
	}
	return false
}

// num reads text that is a number as that number (trimmed text otherwise).
func num(params ...any) (any, error) {
	s, ok := params[0].(string)
	if !ok {
		return params[0], nil
	}
	t := strings.TrimSpace(s)
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return i, nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, nil
	}
	return t, nil
}

func trim(params ...any) (any, error) {
	if s, ok := params[0].(string); ok {
		return strings.TrimSpace(s), nil
	}
	return params[0], nil
}

// empty reports whether a value is null, blank text or an empty container.
func empty(params ...any) (any, error) {
	if len(params) != 1 {
		return nil, fmt.Errorf("empty takes one value")
	}
	switch t := params[0].(type) {
	case nil:
		return true, nil
	case string:
		return strings.TrimSpace(t) == "", nil
	case []any:
		return len(t) == 0, nil
	case map[string]any:
		return len(t) == 0, nil
	}
	rv := reflect.ValueOf(params[0])
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0, nil
	}
	return false, nil
}

// UnresolvedError is a template of a condition that has no value and no
// default.
type UnresolvedError struct {
	Refs []string
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("the condition reads %s, which has no value", strings.Join(e.Refs, ", "))
}

// Eval evaluates the condition against the shared store root. It returns
// an *UnresolvedError when a template without a default does not resolve,
// and an error naming the value when the result is not true or false.
func (x *Expr) Eval(root map[string]any) (bool, error) {
	env := make(map[string]any, len(x.vars))
	var missing []string
	for i, ref := range x.Refs {
		v, found := template.Value(root, ref)
		if !found && !x.Defaulted[i] {
			missing = append(missing, ref.Raw)
		}
		env[x.vars[i]] = v
	}
	if len(missing) > 0 {
		return false, &UnresolvedError{Refs: missing}
	}
	out, err := expr.Run(x.prog, env)
	if err != nil {
		return false, fmt.Errorf("the condition %q failed: %s", x.Source, firstLine(err.Error(), x))
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("the condition %q gave %s, not true or false: compare it, e.g. '%s == \"yes\"' or 'not empty(%s)'", x.Source, describe(out), x.Source, x.Source)
	}
	return b, nil
}

// Constant reports whether the condition reads no data (it is always true
// or always false), and its value.
func (x *Expr) Constant() (value, constant bool) {
	if len(x.Refs) > 0 {
		return false, false
	}
	b, err := x.Eval(nil)
	if err != nil {
		return false, false
	}
	return b, true
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(t) + " (text)"
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// Case is one branch of a switch step: the action it takes when its
// condition holds.
type Case struct {
	Action string
	When   string
}

// ParseCases reads a switch step's cases: a list of one-key objects,
// action to condition, in the order they are tried:
//
//   - cases:
//   - none: ${count} == 0
//   - some: ${count} < 10
//
// Its error says how to write them.
func ParseCases(v any) ([]Case, error) {
	const how = "write cases as a list of '<action>: <condition>' items, tried in order, e.g.\n- cases:\n    - none: ${count} == 0\n    - some: ${count} < 10"
	list, ok := v.([]any)
	if !ok {
		if m, isMap := v.(map[string]any); isMap && len(m) > 1 {
			var b strings.Builder
			for _, k := range value.SortedKeys(m) {
				fmt.Fprintf(&b, "\n    - %s: %s", k, value.Stringify(m[k]))
			}
			return nil, fmt.Errorf("'cases' is an object, whose keys have no order; write cases as a list of '<action>: <condition>' items, in the order they are tried:\n- cases:%s", b.String())
		} else if isMap {
			list = []any{m}
		} else {
			return nil, fmt.Errorf("'cases' must be a list, got %s; %s", describe(v), how)
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("'cases' is empty; %s", how)
	}
	out := make([]Case, 0, len(list))
	seen := map[string]bool{}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("cases[%d] must be one '<action>: <condition>' pair, got %s; %s", i, describe(item), how)
		}
		for action, w := range m {
			var src string
			switch t := w.(type) {
			case string:
				src = t
			case bool:
				src = strconv.FormatBool(t)
			default:
				return nil, fmt.Errorf("cases[%d] (%s): the condition must be text, got %s; %s", i, action, describe(w), how)
			}
			if seen[action] {
				return nil, fmt.Errorf("cases[%d]: the action '%s' is listed twice; each case takes its own action", i, action)
			}
			seen[action] = true
			out = append(out, Case{Action: action, When: src})
		}
	}
	return out, nil
}

// singleEquals finds a lone '=' (not ==, !=, <=, >=) outside quotes, or -1.
func singleEquals(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '=':
			prev, next := byte(0), byte(0)
			if i > 0 {
				prev = s[i-1]
			}
			if i+1 < len(s) {
				next = s[i+1]
			}
			if next == '=' {
				i++
				continue
			}
			if prev != '=' && prev != '!' && prev != '<' && prev != '>' {
				return i
			}
		}
	}
	return -1
}
