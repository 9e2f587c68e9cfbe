package workflow

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/value"
)

// StructureError is one violation of the JSON IR's shape (docs/workflow-format.md) or of
// the structural rules checked after it (edge endpoints, duplicate ids).
// Path locates the problem in IR terms ("nodes[0].type", "edges[1].to",
// "inputs.name.type", or "root" for the top level).
type StructureError struct {
	Path       string
	Message    string
	Suggestion string
}

// Error renders "Validation error at <path>: <message>" and, when there is a
// suggestion, the suggestion on the next line.
func (e StructureError) Error() string {
	s := "Validation error at " + e.Path + ": " + e.Message
	if e.Suggestion != "" {
		s += "\n" + e.Suggestion
	}
	return s
}

// InputTypes are the values the IR schema allows for inputs/outputs "type".
var InputTypes = []string{"string", "number", "boolean", "object", "array", "str", "int", "integer", "float", "bool", "dict", "list"}

var (
	irVersionRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+\.\d+\.\d+$`) })
	batchItemsRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\{.+\}$`) })
	batchAsRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`) })
)

// CheckStructure reports every structural problem of the workflow: the IR
// JSON-schema rules (required fields, types, enums, patterns, batch limits,
// unknown properties recorded while decoding) plus edge endpoints, start
// node, mapping targets and duplicate node ids. It returns nil when the
// structure is valid. Unlike the Python pflow it reports all problems, in a stable
// order (document order of the offending parts).
func (w *Workflow) CheckStructure() []StructureError {
	if w == nil {
		return []StructureError{{Path: "root", Message: "Workflow is empty", Suggestion: "Provide a workflow with at least one node"}}
	}
	var errs []StructureError
	errs = append(errs, w.decodeErrs...)
	c := &checker{errs: errs}
	c.check(w)
	return dedupe(c.errs)
}

func dedupe(errs []StructureError) []StructureError {
	if len(errs) == 0 {
		return nil
	}
	seen := map[StructureError]bool{}
	out := errs[:0:0]
	for _, e := range errs {
		if seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e)
	}
	return out
}

type checker struct{ errs []StructureError }

func (c *checker) add(path, msg, sug string) {
	c.errs = append(c.errs, StructureError{Path: path, Message: msg, Suggestion: sug})
}

func (c *checker) has(path string) bool {
	for _, e := range c.errs {
		if e.Path == path {
			return true
		}
	}
	return false
}

func requiredErr(path, field string) StructureError {
	return StructureError{Path: path, Message: fmt.Sprintf("'%s' is a required property", field), Suggestion: fmt.Sprintf("Add the required field '%s'", field)}
}

func (c *checker) required(path, field string) {
	c.errs = append(c.errs, requiredErr(path, field))
}

func (c *checker) check(w *Workflow) {
	if w.IRVersion == "" {
		c.required("root", "ir_version")
	} else if !irVersionRe().MatchString(w.IRVersion) {
		c.add("ir_version", fmt.Sprintf("%s does not match '^\\d+\\.\\d+\\.\\d+$'", pyRepr(w.IRVersion)), "Use semantic versioning format, e.g., '0.1.0'")
	}
	if len(w.Nodes) == 0 && !c.has("nodes") {
		missing := false
		for _, e := range c.errs {
			if e == requiredErr("root", "nodes") {
				missing = true
			}
		}
		if !missing {
			c.add("nodes", "[] is too short", "Add at least one node to the workflow")
		}
	}
	for _, in := range w.Inputs {
		if in == nil {
			continue
		}
		base := "inputs." + in.Name
		if in.Type != "" && !slices.Contains(InputTypes, in.Type) {
			c.add(base+".type", fmt.Sprintf("%s is not one of %s", pyRepr(in.Type), pyList(InputTypes)), "Valid types: "+strings.Join(InputTypes, ", "))
		}
	}
	ids := make([]string, 0, len(w.Nodes))
	firstAt := map[string]int{}
	for i, n := range w.Nodes {
		base := fmt.Sprintf("nodes[%d]", i)
		if n == nil {
			c.add(base, "None is not of type 'object'", "Change type from 'null' to 'object'")
			continue
		}
		if n.ID == "" {
			c.required(base, "id")
		}
		if n.Type == "" {
			c.required(base, "type")
		}
		if n.Batch != nil {
			c.checkBatch(base+".batch", n.Batch)
		}
		if n.ID != "" {
			if j, dup := firstAt[n.ID]; dup {
				c.add(base+".id", fmt.Sprintf("Duplicate node ID '%s'", n.ID), fmt.Sprintf("Node IDs must be unique; 'nodes[%d]' already uses '%s'. Rename one of them.", j, n.ID))
			} else {
				firstAt[n.ID] = i
				ids = append(ids, n.ID)
			}
		}
	}
	for i, e := range w.Edges {
		base := fmt.Sprintf("edges[%d]", i)
		if e.From == "" {
			c.required(base, "from")
		} else if _, ok := firstAt[e.From]; !ok {
			c.add(base+".from", fmt.Sprintf("Edge references non-existent node '%s'", e.From), "Change to one of: "+pyList(ids))
		}
		if e.To == "" {
			c.required(base, "to")
		} else if _, ok := firstAt[e.To]; !ok {
			c.add(base+".to", fmt.Sprintf("Edge references non-existent node '%s'", e.To), "Change to one of: "+pyList(ids))
		}
	}
	if w.StartNode != "" {
		if _, ok := firstAt[w.StartNode]; !ok {
			c.add("start_node", fmt.Sprintf("start_node references non-existent node '%s'", w.StartNode), "Change to one of: "+pyList(ids))
		}
	}
	for _, id := range value.SortedKeys(w.Mappings) {
		if _, ok := firstAt[id]; !ok {
			c.add("mappings."+id, fmt.Sprintf("Mapping references non-existent node '%s'", id), "Change to one of: "+pyList(ids))
		}
	}
	for _, o := range w.Outputs {
		if o == nil {
			continue
		}
		base := "outputs." + o.Name
		if o.Type != "" && !slices.Contains(InputTypes, o.Type) {
			c.add(base+".type", fmt.Sprintf("%s is not one of %s", pyRepr(o.Type), pyList(InputTypes)), "Valid types: "+strings.Join(InputTypes, ", "))
		}
	}
	switch w.TemplateResolutionMode {
	case "", "strict", "permissive":
	default:
		c.add("template_resolution_mode", fmt.Sprintf("%s is not one of ['strict', 'permissive']", pyRepr(w.TemplateResolutionMode)), "Use 'strict' or 'permissive'")
	}
}

func (c *checker) checkBatch(base string, b *Batch) {
	switch it := b.Items.(type) {
	case nil:
		c.required(base, "items")
	case string:
		if !batchItemsRe().MatchString(it) {
			c.add(base+".items", fmt.Sprintf("%s does not match '^\\$\\{.+\\}$'", pyRepr(it)), "Use a template reference like '${previous_node.items}', or an inline list")
		}
	case []any:
		if len(it) == 0 {
			c.add(base+".items", "[] is too short", "Provide at least one item, or a template reference like '${previous_node.items}'")
		}
	default:
		c.add(base+".items", fmt.Sprintf("%s is not valid under any of the given schemas", pyRepr(it)), "Use a template string like '${previous_node.items}' or a list of items")
	}
	if b.As != "" && !batchAsRe().MatchString(b.As) {
		c.add(base+".as", fmt.Sprintf("%s does not match '^[a-zA-Z_][a-zA-Z0-9_]*$'", pyRepr(b.As)), "Use a simple identifier such as 'item' or 'file'")
	}
	switch b.ErrorHandling {
	case "", "fail_fast", "continue":
	default:
		c.add(base+".error_handling", fmt.Sprintf("%s is not one of ['fail_fast', 'continue']", pyRepr(b.ErrorHandling)), "Use 'fail_fast' (stop at the first failed item) or 'continue'")
	}
	if b.MaxConcurrent != 0 {
		c.intRange(base+".max_concurrent", int64(b.MaxConcurrent), 1, 100)
	}
	if b.MaxRetries != 0 {
		c.intRange(base+".max_retries", int64(b.MaxRetries), 1, 10)
	}
	if b.RetryWait < 0 || math.IsNaN(b.RetryWait) {
		c.add(base+".retry_wait", fmt.Sprintf("%s is less than the minimum of 0", value.FormatFloat(b.RetryWait)), "Use a number of seconds ≥ 0")
	}
}

func (c *checker) intRange(path string, v, lo, hi int64) {
	c.errs = append(c.errs, rangeErrs(path, v, lo, hi)...)
}

func rangeErrs(path string, v, lo, hi int64) []StructureError {
	sug := fmt.Sprintf("Use a whole number from %d to %d", lo, hi)
	if v < lo {
		return []StructureError{{Path: path, Message: fmt.Sprintf("%d is less than the minimum of %d", v, lo), Suggestion: sug}}
	}
	if v > hi {
		return []StructureError{{Path: path, Message: fmt.Sprintf("%d is greater than the maximum of %d", v, hi), Suggestion: sug}}
	}
	return nil
}

// pyRepr renders a value the way Python's jsonschema messages do ('text', 5, True, None).
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "\\'") + "'"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := value.SortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return value.Stringify(x)
	}
}

func pyList(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = pyRepr(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// jsonTypeName names a canonical value's JSON-schema type.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64, int:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// keyAliases maps keys agents commonly write to the key pflow expects.
var keyAliases = map[string]string{
	"concurrency": "max_concurrent", "max_parallel": "max_concurrent", "workers": "max_concurrent",
	"list": "items", "over": "items", "each": "items",
}

// decoder turns generic (canonical) values into IR structs, recording every
// schema violation it meets instead of stopping at the first.
type decoder struct{ errs []StructureError }

func (d *decoder) add(path, msg, sug string) {
	d.errs = append(d.errs, StructureError{Path: path, Message: msg, Suggestion: sug})
}

func (d *decoder) typeErr(path string, v any, want string) {
	d.add(path, fmt.Sprintf("%s is not of type '%s'", pyRepr(v), want), fmt.Sprintf("Change type from '%s' to '%s'", jsonTypeName(v), want))
}

// unknown records keys of m not in allowed, at path (the object's path).
func (d *decoder) unknown(path string, m map[string]any, allowed ...string) []string {
	var extra []string
	for _, k := range value.SortedKeys(m) {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	parts := make([]string, len(extra))
	for i, k := range extra {
		parts[i] = pyRepr(k)
	}
	verb := "was"
	if len(extra) > 1 {
		verb = "were"
	}
	var fixes []string
	node := slices.Contains(allowed, "params") && slices.Contains(allowed, "purpose")
	for _, k := range extra {
		switch {
		case path == "root" && slices.Contains([]string{"name", "title", "description", "version"}, k):
			fixes = append(fixes, fmt.Sprintf("'%s': a workflow's name and description are given when it is saved (workflow_save's name and description, or pflow workflow save), not in its IR: remove \"%s\".", k, k))
			continue
		case node && slices.Contains([]string{"next", "on_error", "on", "then", "depends_on", "needs"}, k):
			fixes = append(fixes, fmt.Sprintf("'%s': in JSON IR the flow is the \"edges\" list: {\"from\": \"<this step>\", \"to\": \"<step>\"} (add \"action\": \"error\" for a failure's route).", k))
			continue
		}
		if a, ok := keyAliases[k]; ok && slices.Contains(allowed, a) {
			fixes = append(fixes, fmt.Sprintf("'%s': did you mean '%s'?", k, a))
		} else if s := suggest.Closest(k, allowed, 1, 0.5); len(s) > 0 {
			fixes = append(fixes, fmt.Sprintf("'%s': did you mean '%s'?", k, s[0]))
		} else if node && !strings.HasPrefix(k, "_") {
			fixes = append(fixes, fmt.Sprintf("'%s': a step's params and controls go inside \"params\": {\"%s\": ...}.", k, k))
		} else if (strings.HasPrefix(path, "outputs.") || strings.HasPrefix(path, "inputs.")) && slices.Contains([]string{"example", "examples", "placeholder", "hint", "label", "title", "help", "format", "pattern", "enum", "choices", "options", "min", "max", "minimum", "maximum", "secret", "sensitive"}, k) {
			fixes = append(fixes, fmt.Sprintf("'%s': pflow has no such setting; say it in the description (the prose under the heading), which --help, workflow_describe and agents show.", k))
		} else if strings.HasPrefix(path, "outputs.") || strings.HasPrefix(path, "inputs.") {
			kind, setting := "output", "- source: ${step.output}"
			if strings.HasPrefix(path, "inputs.") {
				kind, setting = "input", "- type: string"
			}
			fixes = append(fixes, fmt.Sprintf("'%s' is not a setting of an %s; to declare another %s, give it its own heading:\n### %s\nWhat %s is.\n%s", k, kind, kind, k, k, setting))
		}
	}
	var shown []string
	for _, k := range allowed {
		if !strings.HasPrefix(k, "_") {
			shown = append(shown, k)
		}
	}
	allowed = shown
	sug := "Remove unknown properties or check field names"
	if len(fixes) > 0 {
		sug = strings.Join(fixes, "\n") + "\nValid keys here: " + strings.Join(allowed, ", ")
	} else if len(allowed) > 0 {
		sug += " (valid keys here: " + strings.Join(allowed, ", ") + ")"
	}
	d.add(path, fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(parts, ", "), verb), sug)
	return extra
}

func (d *decoder) str(path string, v any) string {
	s, ok := v.(string)
	if !ok {
		d.typeErr(path, v, "string")
	}
	return s
}

func (d *decoder) boolean(path string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.typeErr(path, v, "boolean")
	}
	return b, ok
}

func (d *decoder) integer(path string, v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	d.typeErr(path, v, "integer")
	return 0, false
}

func (d *decoder) number(path string, v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	d.typeErr(path, v, "number")
	return 0, false
}

func (d *decoder) object(path string, v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.typeErr(path, v, "object")
	}
	return m, ok
}

// objects decodes v (at key) as an array of objects, calling each with an
// element's path ("key[i]") and value; other elements are type errors.
func (d *decoder) objects(key string, v any, each func(path string, m map[string]any)) {
	list, ok := v.([]any)
	if !ok {
		d.typeErr(key, v, "array")
		return
	}
	for i, e := range list {
		path := fmt.Sprintf("%s[%d]", key, i)
		if m, ok := d.object(path, e); ok {
			each(path, m)
		}
	}
}

// workflow decodes a whole IR object. keyOrder gives the document order of
// the keys of "inputs" and "outputs" (nil: sorted).
func (d *decoder) workflow(m map[string]any, keyOrder map[string][]string) *Workflow {
	w := &Workflow{}
	d.unknown("root", m, "ir_version", "nodes", "edges", "start_node", "mappings", "inputs", "outputs", "enable_namespacing", "template_resolution_mode", "parallel")
	if v, ok := m["ir_version"]; ok {
		w.IRVersion = d.str("ir_version", v)
	}
	if v, ok := m["nodes"]; !ok {
		d.errs = append(d.errs, requiredErr("root", "nodes"))
	} else {
		d.objects("nodes", v, func(path string, nm map[string]any) { w.Nodes = append(w.Nodes, d.node(path, nm)) })
	}
	if v, ok := m["edges"]; ok {
		d.objects("edges", v, func(path string, em map[string]any) { w.Edges = append(w.Edges, d.edge(path, em)) })
	}
	if v, ok := m["start_node"]; ok {
		w.StartNode = d.str("start_node", v)
	}
	if v, ok := m["mappings"]; ok {
		if mm, ok := d.object("mappings", v); ok {
			w.Mappings = map[string]*Mapping{}
			for _, id := range value.SortedKeys(mm) {
				if mp := d.mapping("mappings."+id, mm[id]); mp != nil {
					w.Mappings[id] = mp
				}
			}
		}
	}
	w.Inputs = declarations(d, m, "inputs", keyOrder["inputs"], d.input)
	w.Outputs = declarations(d, m, "outputs", keyOrder["outputs"], d.output)
	if v, ok := m["enable_namespacing"]; ok {
		if b, ok := d.boolean("enable_namespacing", v); ok {
			w.EnableNamespacing = &b
		}
	}
	if v, ok := m["template_resolution_mode"]; ok {
		w.TemplateResolutionMode = d.str("template_resolution_mode", v)
	}
	if v, ok := m["parallel"]; ok {
		n, err := ParseParallel(v)
		if err != nil {
			d.add("parallel", err.Error(), "Write \"parallel\": true (at most 8 steps at once) or \"parallel\": 4.")
		}
		w.Parallel = n
	}
	return w
}

// declarations decodes m[key], an object of named objects ("inputs",
// "outputs"), with dec in document order; other entries are type errors.
func declarations[T any](d *decoder, m map[string]any, key string, order []string, dec func(path, name string, e map[string]any) T) []T {
	v, ok := m[key]
	if !ok {
		return nil
	}
	om, ok := d.object(key, v)
	if !ok {
		return nil
	}
	var out []T
	for _, name := range orderedKeys(om, order) {
		path := key + "." + name
		if e, ok := d.object(path, om[name]); ok {
			out = append(out, dec(path, name, e))
		}
	}
	return out
}

func orderedKeys(m map[string]any, order []string) []string {
	out := make([]string, 0, len(m))
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	rest := []string{}
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func (d *decoder) node(path string, m map[string]any) *Node {
	n := &Node{}
	if v, ok := m["parameters"]; ok {
		if _, both := m["params"]; !both {
			// normalize_ir renames the legacy "parameters" key to "params".
			m = maps.Clone(m)
			delete(m, "parameters")
			m["params"] = v
		}
	}
	d.unknown(path, m, "id", "type", "purpose", "params", "batch", "_source_lines")
	if v, ok := m["id"]; ok {
		n.ID = d.str(path+".id", v)
	} else {
		d.errs = append(d.errs, requiredErr(path, "id"))
	}
	if v, ok := m["type"]; ok {
		n.Type = d.str(path+".type", v)
	} else {
		d.errs = append(d.errs, requiredErr(path, "type"))
	}
	if v, ok := m["purpose"]; ok {
		n.Purpose = d.str(path+".purpose", v)
	}
	if v, ok := m["params"]; ok {
		if pm, ok := d.object(path+".params", v); ok && len(pm) > 0 {
			n.Params = pm
		}
	}
	if v, ok := m["batch"]; ok {
		n.Batch = d.batch(path+".batch", v)
	}
	if v, ok := m["_source_lines"]; ok {
		if sm, ok := d.object(path+"._source_lines", v); ok {
			n.SourceLines = map[string]int{}
			for _, k := range value.SortedKeys(sm) {
				if i, ok := d.integer(path+"._source_lines."+k, sm[k]); ok {
					n.SourceLines[k] = int(i)
				}
			}
		}
	}
	return n
}

func (d *decoder) edge(path string, m map[string]any) Edge {
	var e Edge
	d.unknown(path, m, "from", "to", "action")
	if v, ok := m["from"]; ok {
		e.From = d.str(path+".from", v)
	} else {
		d.errs = append(d.errs, requiredErr(path, "from"))
	}
	if v, ok := m["to"]; ok {
		e.To = d.str(path+".to", v)
	} else {
		d.errs = append(d.errs, requiredErr(path, "to"))
	}
	if v, ok := m["action"]; ok {
		e.Action = d.str(path+".action", v)
	}
	return e
}

func (d *decoder) mapping(path string, v any) *Mapping {
	m, ok := d.object(path, v)
	if !ok {
		return nil
	}
	d.unknown(path, m, "input_mappings", "output_mappings")
	mp := &Mapping{}
	strMap := func(key string) map[string]string {
		raw, ok := m[key]
		if !ok {
			return nil
		}
		obj, ok := d.object(path+"."+key, raw)
		if !ok {
			return nil
		}
		out := map[string]string{}
		for _, k := range value.SortedKeys(obj) {
			if s, ok := obj[k].(string); ok {
				out[k] = s
			} else {
				d.typeErr(path+"."+key+"."+k, obj[k], "string")
			}
		}
		return out
	}
	mp.InputMappings = strMap("input_mappings")
	mp.OutputMappings = strMap("output_mappings")
	return mp
}

func (d *decoder) input(path, name string, m map[string]any) *Input {
	in := &Input{Name: name}
	d.unknown(path, m, "description", "required", "type", "default", "stdin", "env")
	if v, ok := m["description"]; ok {
		in.Description = d.str(path+".description", v)
	}
	if v, ok := m["required"]; ok {
		if b, ok := d.boolean(path+".required", v); ok {
			in.Required = &b
		}
	}
	if v, ok := m["type"]; ok {
		in.Type = d.str(path+".type", v)
	}
	if v, ok := m["default"]; ok {
		in.Default = value.Normalize(v)
	}
	if v, ok := m["stdin"]; ok {
		in.Stdin, _ = d.boolean(path+".stdin", v)
	}
	if v, ok := m["env"]; ok {
		in.Env = d.str(path+".env", v)
		if in.Env != "" && !envNameRe().MatchString(in.Env) {
			d.add(path+".env", fmt.Sprintf("'%s' is not an environment variable name", in.Env),
				"Name one variable, e.g. '- env: GITHUB_TOKEN' (letters, digits and _, not starting with a digit; no $).")
		}
	}
	return in
}

func (d *decoder) output(path, name string, m map[string]any) *Output {
	o := &Output{Name: name}
	extra := d.unknown(path, m, "description", "type", "source")
	for _, k := range extra {
		if k == "value" || k == "from" {
			// Replace the generic suggestion with the Python pflow's special help.
			d.errs[len(d.errs)-1].Suggestion = fmt.Sprintf("Use 'source' instead of '%s' to say where the output comes from, e.g. in markdown:\n\n### %s\nDescription of the output.\n- source: ${node_id.result}\n\nValid output fields: description, type, source", k, name)
			break
		}
	}
	if v, ok := m["description"]; ok {
		o.Description = d.str(path+".description", v)
	}
	if v, ok := m["type"]; ok {
		o.Type = d.str(path+".type", v)
	}
	if v, ok := m["source"]; ok {
		o.Source = d.str(path+".source", v)
	}
	return o
}

func (d *decoder) batch(path string, v any) *Batch {
	if s, isStr := v.(string); isStr {
		// One message with the form that works: the batch's keys in a
		// block, not a type to change.
		fix := "Write the batch as a block of keys, a ```yaml batch block under the step:\n```yaml batch\nitems: ${<step>.<list output>}\nas: item\n```"
		if form, ok := MappingForm(s); ok {
			fix = fmt.Sprintf("Write the batch as a mapping: '- batch: %s', or as a ```yaml batch block with one 'key: value' line each.", form)
		} else if t := strings.TrimSpace(s); strings.HasPrefix(t, "${") && strings.HasSuffix(t, "}") {
			// the list alone: it is the batch's items
			fix = fmt.Sprintf("The list goes under items: '- batch: {items: %s}' (each item is ${item} in the step), or a ```yaml batch block:\n```yaml batch\nitems: %s\n```", t, t)
		}
		d.add(path, fmt.Sprintf("%s is not of type 'object'", pyRepr(v)), fix)
		return nil
	}
	m, ok := d.object(path, v)
	if !ok {
		return nil
	}
	b := &Batch{}
	d.unknown(path, m, "items", "as", "error_handling", "parallel", "max_concurrent", "max_retries", "retry_wait")
	if v, ok := m["items"]; ok {
		b.Items = value.Normalize(v)
		if b.Items == nil {
			d.typeErr(path+".items", nil, "array")
		}
	} else {
		d.errs = append(d.errs, requiredErr(path, "items"))
	}
	if v, ok := m["as"]; ok {
		b.As = d.str(path+".as", v)
	}
	if v, ok := m["error_handling"]; ok {
		b.ErrorHandling = d.str(path+".error_handling", v)
	}
	if v, ok := m["parallel"]; ok {
		b.Parallel, _ = d.boolean(path+".parallel", v)
	}
	if v, ok := m["max_concurrent"]; ok {
		if i, ok := d.integer(path+".max_concurrent", v); ok {
			d.errs = append(d.errs, rangeErrs(path+".max_concurrent", i, 1, 100)...)
			if i >= 1 && i <= 100 {
				b.MaxConcurrent = int(i)
			}
		}
	}
	if v, ok := m["max_retries"]; ok {
		if i, ok := d.integer(path+".max_retries", v); ok {
			d.errs = append(d.errs, rangeErrs(path+".max_retries", i, 1, 10)...)
			if i >= 1 && i <= 10 {
				b.MaxRetries = int(i)
			}
		}
	}
	if v, ok := m["retry_wait"]; ok {
		if f, ok := d.number(path+".retry_wait", v); ok {
			b.RetryWait = f
		}
	}
	return b
}

// LineOf returns the source line (1-based) of the entity a StructureError
// path points into — "nodes[2].batch.items" → the line of the third step's
// heading, "inputs.name.type" → the input's heading, "mappings.fetch" → the
// step's heading. It returns 0 when the path has no known line (JSON IR, or
// top-level fields).
func (w *Workflow) LineOf(path string) int {
	if w == nil {
		return 0
	}
	if rest, ok := strings.CutPrefix(path, "nodes["); ok {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return 0
		}
		i := 0
		for _, c := range rest[:end] {
			if c < '0' || c > '9' {
				return 0
			}
			i = i*10 + int(c-'0')
			if i > len(w.Nodes) {
				return 0
			}
		}
		if i < len(w.Nodes) && w.Nodes[i] != nil {
			return w.Nodes[i].Line
		}
		return 0
	}
	named := func(rest string, line func(string) (int, bool)) int {
		// Names may contain dots: try the longest prefix first.
		for cut := len(rest); cut > 0; cut = strings.LastIndexByte(rest[:cut], '.') {
			if l, ok := line(rest[:cut]); ok {
				return l
			}
		}
		return 0
	}
	switch {
	case strings.HasPrefix(path, "inputs."):
		return named(path[len("inputs."):], func(n string) (int, bool) {
			if in := w.Inputs.Get(n); in != nil {
				return in.Line, true
			}
			return 0, false
		})
	case strings.HasPrefix(path, "outputs."):
		return named(path[len("outputs."):], func(n string) (int, bool) {
			if o := w.Outputs.Get(n); o != nil {
				return o.Line, true
			}
			return 0, false
		})
	case strings.HasPrefix(path, "mappings."):
		return named(path[len("mappings."):], func(n string) (int, bool) {
			if nd := w.Node(n); nd != nil {
				return nd.Line, true
			}
			return 0, false
		})
	}
	return 0
}

// envNameRe matches an environment variable name.
var envNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
