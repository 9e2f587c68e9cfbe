package validate

import (
	"encoding/json"
	"fmt"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// ---------------------------------------------------------------- layer 7

func (v *validator) unknownParams() {
	for _, n := range v.nodes {
		var known []string
		var spec *node.Spec
		if n.Nested() {
			known = node.NestedParamNames()
		} else {
			spec = v.specs[n.ID]
			if spec == nil {
				continue
			}
			for _, f := range spec.Interface.Params {
				known = append(known, f.Key)
			}
		}
		mapped := map[string]bool{}
		if m := v.w.Mappings[n.ID]; m != nil {
			for p := range m.InputMappings {
				mapped[p] = true
			}
		}
		// An MCP tool's arguments named like a step key or control (type,
		// timeout, retries, retry_wait) are written in the step's args
		// block: '- args: {type: jpeg}'.
		isMCP := strings.HasPrefix(n.Type, "mcp-")
		var args map[string]any
		// badArgs: args is not the mapping of the tool's arguments. Its one
		// message shows the mapping; the arguments written inside it are
		// neither missing nor is args an unknown param.
		badArgs := false
		if raw, ok := n.Params[ArgsParam]; ok && isMCP {
			// A map is always the block (a tool argument named args goes
			// inside it: '- args: {args: ...}'); anything else is the
			// tool's own argument args, when it has one.
			m, isMap := raw.(map[string]any)
			if !isMap && (spec == nil || !declares(spec, ArgsParam)) {
				badArgs = true
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (%s): 'args' must map the tool's argument names to values, got %s", n.ID, n.Type, describeLiteral(raw)),
					NodeID:  n.ID, Param: ArgsParam, Line: n.Line,
					Hint: argsHint(raw, spec),
				})
			}
			args = m
		}
		given := func(k string) (any, bool) {
			if a, ok := args[k]; ok {
				return a, true
			}
			if isMCP && (stepkeys.Consumed(k, true, true) || (k == ArgsParam && args != nil)) {
				return nil, false // the step's control or block, not the tool's argument
			}
			val, ok := n.Params[k]
			return val, ok
		}
		if isMCP && spec != nil {
			for _, k := range value.SortedKeys(n.Params) {
				if declares(spec, k) && stepkeys.Consumed(k, true, true) {
					if _, inArgs := args[k]; !inArgs {
						v.add(layerParams, Diagnostic{Severity: SeverityWarning,
							Message: fmt.Sprintf("Step '%s': '- %s:' is the step's %s, not the argument '%s' of tool %s, which stays unset", n.ID, k, what(k), k, n.Type),
							NodeID:  n.ID, Param: k, Line: n.Line,
							Hint: fmt.Sprintf("To pass the tool's '%s', write it under args: '- args: {%s: ...}' (both may be set).", k, k)})
					}
				}
			}
		}
		// A code block tagged with its language alone (```bash): the
		// param it was meant to fill is the one missing.
		lang, langLine := languageBlock(n, known)
		if lang != "" && spec != nil {
			target := blockTarget(spec, given)
			msg := fmt.Sprintf("Node '%s' (%s): the code block at line %d is tagged '%s', its language, but a block's tag must also name the param it fills", n.ID, n.Type, langLine, lang)
			hint := fmt.Sprintf("Write the block's first line as ```%s %s (the language, then the param).", lang, target)
			if target == "" {
				hint = fmt.Sprintf("Write the block's first line as ```%s <param> (the language, then the param it fills).", lang)
			}
			v.add(layerParams, Diagnostic{Message: msg, NodeID: n.ID, Param: lang, Line: langLine, Hint: hint})
		}
		// Missing required params.
		if spec != nil {
			for _, f := range spec.Interface.Params {
				if !f.Required || f.Default != nil || mapped[f.Key] {
					continue
				}
				if _, ok := given(f.Key); ok || badArgs || lang != "" && f.Key == blockTarget(spec, given) {
					continue
				}
				hint := fmt.Sprintf("Add '- %s: ...' to step '%s'.", f.Key, n.ID)
				if v.ir {
					hint = fmt.Sprintf("Add \"%s\" to nodes[%d].params (step '%s').", f.Key, v.index[n.ID], n.ID)
				}
				if isMCP && (stepkeys.IsStructure(f.Key) || stepkeys.Consumed(f.Key, true, true)) {
					hint = fmt.Sprintf("'- %s:' would set the step's %s; pass the tool's argument under args: '- args: {%s: ...}' in step '%s'.", f.Key, what(f.Key), f.Key, n.ID)
				}
				if f.Description != "" {
					hint += "\n" + f.Key + ": " + f.Description
				}
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (%s): missing required parameter '%s'", n.ID, n.Type, f.Key),
					NodeID:  n.ID, Param: f.Key, Line: n.Line, Hint: hint,
				})
			}
		}
		if spec != nil {
			for _, f := range spec.Interface.Params {
				if val, ok := given(f.Key); ok && !mapped[f.Key] && f.Sink != node.SinkExpr { // conditions say their own
					if msg, fix := literalMismatch(f, val); msg != "" {
						hint := "Corrected line:\n" + fix
						if v.ir {
							hint = fmt.Sprintf("In nodes[%d].params, give \"%s\" a value of type %s.", v.index[n.ID], f.Key, f.Type)
						}
						v.add(layerParams, Diagnostic{
							Message: fmt.Sprintf("Node '%s' (%s): parameter '%s' %s", n.ID, n.Type, f.Key, msg),
							NodeID:  n.ID, Param: f.Key, Line: n.Line,
							Hint: hint,
						})
					}
				}
			}
		}
		// Seconds written as milliseconds (timeout: 30000 is over 8 hours).
		for _, p := range []string{stepkeys.Timeout, stepkeys.RetryWait} {
			if f, ok := literalNumber(n.Params[p]); ok && f >= 1000 && math.Mod(f, 1000) == 0 {
				v.add(layerParams, Diagnostic{Severity: SeverityWarning,
					Message: fmt.Sprintf("Step '%s': '- %s: %s' is %s seconds (%s); pflow reads %s in seconds, so this looks like milliseconds", n.ID, p, value.Stringify(n.Params[p]), value.Stringify(n.Params[p]), time.Duration(f*float64(time.Second)), p),
					NodeID:  n.ID, Param: p, Line: n.Line,
					Hint: fmt.Sprintf("For %g seconds write '- %s: %g' (or '- %s: %gs'); keep the value if you mean %s.", f/1000, p, f/1000, p, f/1000, time.Duration(f*float64(time.Second)))})
			}
		}
		// A literal control value the run would refuse is refused here first,
		// by the same parser.
		for _, p := range value.SortedKeys(n.Params) {
			key, ok := stepkeys.Lookup(p)
			if !ok || key.Check == nil || !stepkeys.Consumed(p, spec != nil && declares(spec, p), isMCP) || p == stepkeys.When {
				continue // a when is checked with the conditions (conditions.go)
			}
			val := n.Params[p]
			if str, isStr := val.(string); isStr && template.HasTemplate(str) {
				continue
			}
			if err := key.Check(val); err != nil {
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Step '%s': %s", n.ID, err),
					NodeID:  n.ID, Param: p, Line: n.Line,
					Hint: fmt.Sprintf("'- %s:' takes %s: %s.", p, key.Takes, key.Meaning),
				})
			}
		}
		if len(known) == 0 || (spec != nil && spec.Interface.ExtraParams) {
			continue // the node says it takes params it does not list
		}
		for _, p := range value.SortedKeys(args) {
			if !slices.Contains(known, p) {
				msg := fmt.Sprintf("Node '%s' (%s): unknown argument '%s' in args.", n.ID, n.Type, p)
				fix := describeFix(n, ArgsParam, "Arguments", known)
				if s := suggest.Closest(p, known, 1, 0.4); len(s) > 0 {
					msg += fmt.Sprintf(" Did you mean '%s'?", s[0])
					fix.Replacement = s[0]
				}
				v.add(layerParams, Diagnostic{Message: msg, NodeID: n.ID, Param: ArgsParam, Line: n.Line, Fixes: []pferr.Fix{fix}})
			}
		}
		for _, p := range value.SortedKeys(n.Params) {
			if slices.Contains(known, p) || stepkeys.Consumed(p, false, isMCP) || p == lang {
				continue
			}
			if isMCP && p == ArgsParam && (args != nil || badArgs) {
				continue
			}
			msg := fmt.Sprintf("Node '%s' (%s): unknown parameter '%s'.", n.ID, n.Type, p)
			fix := describeFix(n, p, "Parameters", known)
			if n.Nested() && slices.Contains(childInputKeys, p) {
				form := "{<input>: ${...}}"
				if m, ok := n.Params[p].(map[string]any); ok && len(m) > 0 {
					form = value.YAMLFlow(m, func(k string) bool { return leadingIdent(k) == k })
				}
				msg = fmt.Sprintf("Node '%s' (%s): unknown parameter '%s': a child workflow's inputs are passed with '- param_mapping: %s'.", n.ID, n.Type, p, form)
				fix.Replacement = "param_mapping"
			} else if f, ok := alsoNamed(spec, p); ok {
				msg = fmt.Sprintf("Node '%s' (%s): unknown parameter '%s': %s's param for that is '%s'.", n.ID, n.Type, p, n.Type, f)
				fix.Replacement = f
			} else if instead, ok := stepkeys.Misplaced(p); ok {
				msg = fmt.Sprintf("Node '%s' (%s): unknown parameter '%s': %s.", n.ID, n.Type, p, instead.Say)
				if s, isText := n.Params[p].(string); isText && instead.Key == stepkeys.When {
					msg = fmt.Sprintf("Node '%s' (%s): unknown parameter '%s': a step's condition is '- when:'; write '- when: %s'.", n.ID, n.Type, p, s)
				}
				fix.Replacement = instead.Key
			} else if s := suggest.Closest(p, append(slices.Clone(known), stepkeys.Names()...), 1, 0.4); len(s) > 0 {
				msg += fmt.Sprintf(" Did you mean '%s'?", s[0])
				fix.Replacement = s[0]
			}
			// An unknown param is an error: a misspelt key would otherwise
			// make the step silently do the wrong thing.
			v.add(layerParams, Diagnostic{
				Message: msg,
				NodeID:  n.ID, Param: p, Line: n.Line,
				Fixes: []pferr.Fix{fix},
			})
		}
	}
}

// literalMismatch checks a literal param value against its field's type and
// enum. It returns what is wrong ("" when fine or not literal) and the
// corrected '- key: value' line.
func literalMismatch(f node.Field, val any) (string, string) {
	if str, ok := val.(string); ok && template.HasTemplate(str) {
		return "", ""
	}
	types := strings.Split(f.Type, "|")
	checked := false
	for _, t := range types {
		ok, known := literalFits(strings.TrimSpace(t), val)
		if ok {
			if len(f.Enum) > 0 {
				return enumMismatch(f, val)
			}
			return "", ""
		}
		checked = checked || known
	}
	if !checked {
		return "", ""
	}
	want := map[string]string{"str": "a string", "int": "a whole number", "float": "a number", "dict": "an object (key: value lines)", "list": "a list", "bool": "true or false"}
	var names []string
	for _, t := range types {
		if w, ok := want[strings.TrimSpace(t)]; ok {
			names = append(names, w)
		}
	}
	fix := exampleLine(f)
	if str, ok := val.(string); ok && slices.Contains(types, "dict") {
		if form, ok := workflow.MappingForm(str); ok {
			fix = fmt.Sprintf("- %s: %s", f.Key, form)
		}
	}
	return fmt.Sprintf("expects %s (%s), got %s", strings.Join(names, " or "), f.Type, describeLiteral(val)), fix
}

// argsHint is the fix of an MCP step whose args is not a mapping: the
// mapping its text lists ('a=19 b=23' is '- args: {a: 19, b: 23}'), or
// one of the tool's required arguments.
func argsHint(raw any, spec *node.Spec) string {
	const how = " (or a ```yaml args block, one 'name: value' line per argument)"
	if s, ok := raw.(string); ok {
		if form, ok := workflow.MappingForm(s); ok {
			return fmt.Sprintf("Write the tool's arguments as a mapping: '- %s: %s'%s.", ArgsParam, form, how)
		}
	}
	var names []string
	if spec != nil {
		for _, f := range spec.Interface.Params {
			if f.Required && f.Default == nil {
				names = append(names, f.Key+": ...")
			}
		}
	}
	if len(names) == 0 {
		return "Write the tool's arguments as a mapping, e.g. '- args: {type: jpeg, timeout: 5000}'" + how + "."
	}
	return fmt.Sprintf("Write the tool's arguments as a mapping: '- %s: {%s}'%s.", ArgsParam, strings.Join(names, ", "), how)
}

// literalFits reports whether val fits type t, and whether t is a type this
// check knows.
func literalFits(t string, val any) (fits, known bool) {
	switch value.CanonicalType(t) {
	case "str":
		switch val.(type) {
		case map[string]any, []any:
			return false, true
		}
		return true, true
	case "int":
		switch x := val.(type) {
		case int64, int:
			return true, true
		case float64:
			return x == float64(int64(x)), true
		case string:
			_, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			return err == nil, true
		}
		return false, true
	case "float":
		switch x := val.(type) {
		case int64, int, float64:
			return true, true
		case string:
			_, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			return err == nil, true
		}
		return false, true
	case "dict":
		switch x := val.(type) {
		case map[string]any:
			return true, true
		case string:
			var m map[string]any
			return json.Unmarshal([]byte(x), &m) == nil, true
		}
		return false, true
	case "list":
		switch x := val.(type) {
		case []any:
			return true, true
		case string:
			var l []any
			return json.Unmarshal([]byte(x), &l) == nil, true
		}
		return false, true
	case "bool":
		switch x := val.(type) {
		case bool:
			return true, true
		case string:
			_, err := strconv.ParseBool(x)
			return err == nil, true
		}
		return false, true
	}
	return true, false
}

func enumMismatch(f node.Field, val any) (string, string) {
	got := fmt.Sprint(val)
	var opts []string
	for _, e := range f.Enum {
		s := fmt.Sprint(e)
		if strings.EqualFold(s, got) {
			return "", ""
		}
		opts = append(opts, s)
	}
	fix := opts[0]
	if s := suggest.Closest(got, opts, 1, 0.3); len(s) > 0 {
		fix = s[0]
	}
	return fmt.Sprintf("must be one of %s, got %s", strings.Join(opts, ", "), describeLiteral(val)), fmt.Sprintf("- %s: %s", f.Key, fix)
}

func describeLiteral(val any) string {
	switch x := val.(type) {
	case string:
		return fmt.Sprintf("the text %q", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", val)
}

// exampleLine is a corrected '- key: value' line for f.
func exampleLine(f node.Field) string {
	t := value.CanonicalType(strings.Split(f.Type, "|")[0])
	if f.Default != nil {
		if b, err := json.Marshal(f.Default); err == nil && t != "dict" && t != "list" {
			return fmt.Sprintf("- %s: %s", f.Key, b)
		}
	}
	switch t {
	case "int":
		return fmt.Sprintf("- %s: 30", f.Key)
	case "float":
		return fmt.Sprintf("- %s: 0.5", f.Key)
	case "dict":
		return fmt.Sprintf("- %s:\n    NAME: value", f.Key)
	case "list":
		return fmt.Sprintf("- %s: [first, second]", f.Key)
	case "bool":
		return fmt.Sprintf("- %s: true", f.Key)
	}
	return fmt.Sprintf("- %s: \"text\"", f.Key)
}

// describeFix is the fix of an unknown param of n: the params it takes
// (what), where to see them, and the param to change.
func describeFix(n *workflow.Node, param, what string, known []string) pferr.Fix {
	return pferr.Fix{
		Text:         fmt.Sprintf("%s of %s: %s; to see them described, {do}.", what, n.Type, strings.Join(known, ", ")),
		Do:           pferr.DescribeNode(n.Type),
		Step:         n.ID,
		Param:        param,
		Line:         n.Line,
		Alternatives: known,
	}
}

// what names what a step key sets, for messages ("retry count").
func what(key string) string {
	if k, ok := stepkeys.Lookup(key); ok {
		return k.What
	}
	return key
}

// literalNumber is a number written as a literal (an integer or a float).
func literalNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// codeLanguages are the words a code block's tag starts with when it names
// a language (```bash command); alone, they name no param.
var codeLanguages = []string{"bash", "sh", "zsh", "shell", "console", "python", "python3", "py", "js", "javascript", "node", "ts", "typescript",
	"json", "yaml", "yml", "sql", "markdown", "md", "html", "xml", "go", "ruby", "rb", "perl", "jq", "toml", "ini", "csv", "txt"}

// languageBlock finds a param of n filled by a code block whose whole tag is
// a language (```bash) and which n's node does not take: the block names its
// language but not its param. It returns the language and the block's line.
func languageBlock(n *workflow.Node, known []string) (string, int) {
	for _, k := range value.SortedKeys(n.SourceLines) {
		if slices.Contains(codeLanguages, strings.ToLower(k)) && !slices.Contains(known, k) {
			return k, n.SourceLines[k] - 1 // the fence line, before the first content line
		}
	}
	return "", 0
}

// blockTarget is the param a language-only code block most likely meant:
// the first required text param not given, else the first param whose
// value is a command, code or text sink.
func blockTarget(spec *node.Spec, given func(string) (any, bool)) string {
	for _, f := range spec.Interface.Params {
		if _, ok := given(f.Key); !ok && f.Required && f.Default == nil && strings.Contains(f.Type, "str") {
			return f.Key
		}
	}
	for _, f := range spec.Interface.Params {
		if _, ok := given(f.Key); !ok && (f.Sink == node.SinkShell || f.Sink == node.SinkCode) {
			return f.Key
		}
	}
	return ""
}

// alsoNamed finds the param of spec that other tools call name (node.Field.Also).
func alsoNamed(spec *node.Spec, name string) (string, bool) {
	if spec == nil {
		return "", false
	}
	for _, f := range spec.Interface.Params {
		if slices.Contains(f.Also, strings.ToLower(name)) {
			return f.Key, true
		}
	}
	return "", false
}

// withAlsoKeys is params with each param written under another tool's name
// (node.Field.Also) under its own key too, for what is derived from params
// (a step's actions) while the unknown key is reported on its own.
func withAlsoKeys(spec *node.Spec, params map[string]any) map[string]any {
	var out map[string]any
	for k, v := range params {
		if key, ok := alsoNamed(spec, k); ok {
			if _, given := params[key]; !given {
				if out == nil {
					out = maps.Clone(params)
				}
				out[key] = v
			}
		}
	}
	if out == nil {
		return params
	}
	return out
}

// childInputKeys are other tools' keys for a child workflow's inputs
// (a nested step takes them as param_mapping).
var childInputKeys = []string{"inputs", "input", "params", "parameters", "args", "arguments", "with", "variables", "vars"}
