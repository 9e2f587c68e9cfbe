package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

// schemaTypes returns the JSON Schema type names of a property schema
// ("string", ["integer","null"] → [integer null]).
func schemaTypes(prop map[string]any) []string {
	switch t := prop["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

var pflowType = map[string]string{
	"string": "str", "number": "float", "integer": "int", "boolean": "bool",
	"array": "list", "object": "dict", "null": "any",
}

// fieldType maps a property schema to a pflow type: the first non-null type
// of a union; "any" when the schema has no usable type (anyOf, $ref, ...).
func fieldType(prop map[string]any) string {
	for _, t := range schemaTypes(prop) {
		if t != "null" {
			if p, ok := pflowType[t]; ok {
				return p
			}
		}
	}
	return "any"
}

func asMap(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case nil:
		return nil
	}
	if n, ok := toCanonical(v).(map[string]any); ok {
		return n
	}
	return nil
}

// SchemaFields converts an object schema's properties to node fields, in
// the schema's property order when known, else sorted by name. Properties
// written as servers write them are resolved: a local $ref (#/$defs/X,
// #/definitions/X) to its definition, oneOf/anyOf to the union of their
// branches' types ("str|int"; null branches dropped), so params show and are
// checked with their real types.
func SchemaFields(schema any) []node.Field {
	s := asMap(schema)
	return schemaFields(s, s, 0)
}

// maxRefDepth bounds $ref chains (a schema may refer to itself).
const maxRefDepth = 16

func schemaFields(s, root map[string]any, depth int) []node.Field {
	if s == nil || depth > maxRefDepth {
		return nil
	}
	s = resolveRef(s, root, depth)
	if t, ok := s["type"].(string); ok && t != "object" {
		return nil
	}
	props := asMap(s["properties"])
	if props == nil {
		return nil
	}
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			if k, ok := x.(string); ok {
				req[k] = true
			}
		}
	}
	var out []node.Field
	for _, k := range value.SortedKeys(props) {
		p := asMap(props[k])
		if p == nil {
			p = map[string]any{}
		}
		p = resolveRef(p, root, depth)
		f := node.Field{Key: k, Type: unionType(p, root, depth), Required: req[k]}
		f.Description, _ = p["description"].(string)
		if d, ok := p["default"]; ok {
			f.Default = value.Normalize(d)
		}
		if e, ok := p["enum"].([]any); ok {
			f.Enum = e
		}
		if f.Type == "dict" {
			f.Structure = schemaFields(p, root, depth+1)
		}
		if f.Type == "list" {
			if items := asMap(p["items"]); items != nil {
				if items = resolveRef(items, root, depth); fieldType(items) == "dict" {
					f.Structure = schemaFields(items, root, depth+1)
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// OutputFields are the outputs of an MCP node (see docs/decisions.md, "Result
// extraction"): result (with the
// outputSchema's structure when declared), each top-level field of the
// outputSchema hoisted, and error.
func OutputFields(outputSchema any) []node.Field {
	fields := SchemaFields(outputSchema)
	res := node.Field{Key: "result", Type: "any", Description: "Tool execution result"}
	if len(fields) > 0 {
		res.Type = "dict"
		res.Structure = fields
	}
	out := []node.Field{res}
	for _, f := range fields {
		if f.Key == "result" || f.Key == "error" || strings.HasPrefix(f.Key, "_") {
			continue
		}
		out = append(out, f)
	}
	return append(out, node.Field{Key: "error", Type: "str", Description: "Error message when the call fails"})
}

// ArgError is a tool argument that does not fit the tool's inputSchema.
type ArgError struct {
	Param, Tool, Message string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("Invalid params: parameter '%s' of tool '%s' %s", e.Param, e.Tool, e.Message)
}

// CoerceArgs converts step params to the types the tool's inputSchema
// declares ("5" → 5 for an integer, 3 → "3" for a string, a JSON string →
// a list/object) and checks required params, types and enums, so a wrong
// argument fails before the call with the param's name and expected type.
// It compiles the schema on every call; a session compiles each tool's
// schema once (Session.CoerceArgs).
func CoerceArgs(tool string, inputSchema any, args map[string]any) (map[string]any, error) {
	return CompileInputSchema(inputSchema).Coerce(tool, args)
}

// InputSchema is a tool's inputSchema prepared for CoerceArgs: the
// properties' types and enums looked up once, and the schema resolved once
// for the full JSON Schema validation. It is immutable and safe for
// concurrent use.
type InputSchema struct {
	ok       bool // the schema is an object (anything else: no checks)
	required []string
	props    map[string]propSchema
	resolved *jsonschema.Resolved // nil when the schema does not resolve
}

type propSchema struct {
	types []string
	enum  []any
}

// CompileInputSchema prepares a tool's inputSchema for Coerce.
func CompileInputSchema(inputSchema any) *InputSchema {
	s := asMap(inputSchema)
	if s == nil {
		return &InputSchema{}
	}
	out := &InputSchema{ok: true, props: map[string]propSchema{}}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			if k, _ := x.(string); k != "" {
				out.required = append(out.required, k)
			}
		}
	}
	for k, pv := range asMap(s["properties"]) {
		p := asMap(pv)
		if p == nil {
			continue
		}
		ps := propSchema{types: schemaTypes(p)}
		if e, ok := p["enum"].([]any); ok && len(e) > 0 {
			ps.enum = e
		}
		out.props[k] = ps
	}
	if rs, err := resolveSchema(s); err == nil {
		out.resolved = rs
	}
	return out
}

// Coerce is CoerceArgs with a compiled schema. args is not modified.
func (is *InputSchema) Coerce(tool string, args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	if is == nil || !is.ok {
		return out, nil
	}
	for _, k := range is.required {
		if v, present := out[k]; !present || v == nil {
			return nil, &ArgError{k, tool, fmt.Sprintf("is required but missing. Add '- %s: ...' to the step", k)}
		}
	}
	for _, k := range value.SortedKeys(out) {
		v := out[k]
		p, ok := is.props[k]
		if !ok {
			continue
		}
		if len(p.types) > 0 {
			cv, err := coerce(v, p.types)
			if err != nil {
				return nil, &ArgError{k, tool, err.Error()}
			}
			out[k] = cv
			v = cv
		}
		if len(p.enum) > 0 {
			found := false
			for _, x := range p.enum {
				if value.Stringify(x) == value.Stringify(v) && value.TypeName(x) == value.TypeName(v) {
					found = true
				}
			}
			if !found {
				opts := make([]string, len(p.enum))
				for i, x := range p.enum {
					opts[i] = value.Stringify(x)
				}
				return nil, &ArgError{k, tool, fmt.Sprintf("must be one of: %s (got %q)", strings.Join(opts, ", "), value.Stringify(v))}
			}
		}
	}
	if is.resolved != nil {
		if err := is.resolved.Validate(jsonInstance(out)); err != nil {
			return nil, fmt.Errorf("Invalid params: arguments for tool '%s' do not match its input schema: %v", tool, err)
		}
	}
	return out, nil
}

func coerce(v any, types []string) (any, error) {
	for _, t := range types {
		if matches(v, t) {
			return v, nil
		}
	}
	for _, t := range types {
		if cv, ok := convert(v, t); ok {
			return cv, nil
		}
	}
	want := make([]string, 0, len(types))
	for _, t := range types {
		want = append(want, schemaWord(t))
	}
	return nil, fmt.Errorf("expects %s, got %s %s", strings.Join(want, " or "), value.TypeName(v), shortValue(v))
}

func schemaWord(t string) string {
	switch t {
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "a boolean (true/false)"
	case "string":
		return "a string"
	case "array":
		return "a list"
	case "object":
		return "an object (key: value mapping)"
	case "null":
		return "null"
	}
	return t
}

func shortValue(v any) string {
	s := value.Stringify(v)
	if len(s) > 60 {
		s = value.Truncate(s, 57, "...")
	}
	return strconv.Quote(s)
}

func matches(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		switch x := v.(type) {
		case int64, int:
			return true
		case float64:
			return x == math.Trunc(x) && !math.IsInf(x, 0)
		}
	case "number":
		switch v.(type) {
		case int64, int, float64:
			return true
		}
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func convert(v any, t string) (any, bool) {
	s, isStr := v.(string)
	ts := strings.TrimSpace(s)
	switch t {
	case "string":
		switch v.(type) {
		case int64, int, float64, bool:
			return value.Stringify(v), true
		case map[string]any, []any:
			return value.Stringify(v), true
		}
	case "integer":
		if isStr {
			if n, err := strconv.ParseInt(ts, 10, 64); err == nil {
				return n, true
			}
			if f, err := strconv.ParseFloat(ts, 64); err == nil && f == math.Trunc(f) {
				return int64(f), true
			}
		}
	case "number":
		if isStr {
			if n, err := strconv.ParseInt(ts, 10, 64); err == nil {
				return n, true
			}
			if f, err := strconv.ParseFloat(ts, 64); err == nil && !math.IsNaN(f) {
				return f, true
			}
		}
	case "boolean":
		if isStr {
			switch strings.ToLower(ts) {
			case "true", "yes", "1", "on":
				return true, true
			case "false", "no", "0", "off":
				return false, true
			}
		}
	case "array":
		if isStr {
			if p, ok := value.TryParseContainer(ts); ok {
				if l, ok := p.([]any); ok {
					return l, true
				}
			}
		}
	case "object":
		if isStr {
			if p, ok := value.TryParseContainer(ts); ok {
				if m, ok := p.(map[string]any); ok {
					return m, true
				}
			}
		}
	}
	return nil, false
}

// resolveRef returns the definition a local $ref points at, with the
// referring schema's own keys (description, default) on top; other schemas
// are returned as they are.
func resolveRef(p, root map[string]any, depth int) map[string]any {
	for i := depth; i <= maxRefDepth; i++ {
		ref, ok := p["$ref"].(string)
		if !ok {
			return p
		}
		var def map[string]any
		for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
			if name, ok := strings.CutPrefix(ref, prefix); ok {
				def = asMap(asMap(root[strings.Trim(prefix[2:], "/")])[name])
			}
		}
		if def == nil {
			return p // a remote or unknown ref: its type stays unknown
		}
		merged := make(map[string]any, len(def)+len(p))
		for k, v := range def {
			merged[k] = v
		}
		for k, v := range p {
			if k != "$ref" {
				merged[k] = v
			}
		}
		p = merged
	}
	return p
}

// unionType is fieldType extended to oneOf/anyOf: the distinct types of the
// branches joined with "|" ("any" when a branch has no known type).
func unionType(p, root map[string]any, depth int) string {
	if t := fieldType(p); t != "any" || (p["oneOf"] == nil && p["anyOf"] == nil) {
		return t
	}
	var branches []any
	for _, k := range []string{"oneOf", "anyOf"} {
		if b, ok := p[k].([]any); ok {
			branches = append(branches, b...)
		}
	}
	var types []string
	seen := map[string]bool{}
	for _, b := range branches {
		bm := asMap(b)
		if bm == nil {
			return "any"
		}
		bm = resolveRef(bm, root, depth)
		if ts := schemaTypes(bm); len(ts) == 1 && ts[0] == "null" {
			continue
		}
		t := unionType(bm, root, depth+1)
		if t == "any" {
			return "any"
		}
		if !seen[t] {
			seen[t] = true
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return "any"
	}
	return strings.Join(types, "|")
}

// SchemaHash digests a tool's input schema (canonical JSON): equal
// schemas, equal hashes; "" for none.
func SchemaHash(schema any) string {
	if schema == nil {
		return ""
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return ""
	}
	var v any // through a map: keys sorted whatever the source's order
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	b, _ = json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
