package validate

import (
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/template"
)

// canonType maps type aliases to pflow's names: str, int, float, number,
// bool, dict, list, any (generics kept: list[dict]).
func canonType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	base, rest, hasGen := strings.Cut(t, "[")
	switch base {
	case "string":
		base = "str"
	case "integer":
		base = "int"
	case "boolean":
		base = "bool"
	case "object":
		base = "dict"
	case "array":
		base = "list"
	case "", "null", "none":
		if base == "" {
			base = "any"
		}
	}
	if hasGen {
		return base + "[" + rest
	}
	return base
}

// members splits a union type ("dict|str") into canonical members.
func members(t string) []string {
	if strings.TrimSpace(t) == "" {
		return []string{"any"}
	}
	// Split on top-level '|' only: list[dict|str]|str → list[dict|str], str.
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '|':
			if depth == 0 {
				parts = append(parts, t[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, t[start:])
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, canonType(p))
	}
	return out
}

// baseType strips generics: list[dict] → list.
func baseType(m string) string {
	b, _, _ := strings.Cut(m, "[")
	return b
}

// elemType returns the item type of a list member (list[dict] → dict), or any.
func elemType(m string) string {
	_, rest, ok := strings.Cut(m, "[")
	if !ok {
		return "any"
	}
	return canonType(strings.TrimSuffix(rest, "]"))
}

func hasMember(t string, want ...string) bool {
	for _, m := range members(t) {
		for _, w := range want {
			if baseType(m) == w {
				return true
			}
		}
	}
	return false
}

// compatible reports whether a value of type src may fill a param of type
// dst (as in the Python pflow). A union source must be compatible
// in all members, a union target in any. str → int/float/number/bool is left
// to the runtime's coercion (see weakCompatible).
func compatible(src, dst string) bool {
	for _, s := range members(src) {
		ok := false
		for _, d := range members(dst) {
			if memberCompatible(baseType(s), baseType(d)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func memberCompatible(s, d string) bool {
	if s == "any" || d == "any" || s == d {
		return true
	}
	switch s {
	case "str":
		return d == "dict" || d == "list"
	case "int":
		return d == "float" || d == "number" || d == "str"
	case "float":
		return d == "number" || d == "str"
	case "number":
		return d == "int" || d == "float" || d == "str"
	case "bool":
		return d == "str"
	case "dict", "list":
		return d == "str"
	}
	return false
}

// weakCompatible: text that the runtime converts when it looks right
// ("42" → 42, "true" → true).
func weakCompatible(src, dst string) bool {
	if !hasMember(src, "str") {
		return false
	}
	return hasMember(dst, "int", "float", "number", "bool")
}

// fieldPath is one flattened output path for the "Available outputs" listing.
type fieldPath struct {
	path string // after the head, e.g. ".response.items[0].id"
	typ  string
	key  string // last key
}

// flatten lists every path the fields offer, list items addressed as [0].
func flatten(fields []node.Field, prefix string, depth int, out *[]fieldPath) {
	for _, f := range fields {
		p := prefix + "." + f.Key
		*out = append(*out, fieldPath{path: p, typ: typeOrAny(f.Type), key: f.Key})
		if len(f.Structure) > 0 && depth < 6 {
			sub := p
			if hasMember(f.Type, "list") {
				sub += "[0]"
			}
			flatten(f.Structure, sub, depth+1, out)
		}
	}
}

func typeOrAny(t string) string {
	if strings.TrimSpace(t) == "" {
		return "any"
	}
	return t
}

func findField(fields []node.Field, key string) (node.Field, bool) {
	for _, f := range fields {
		if f.Key == key {
			return f, true
		}
	}
	return node.Field{}, false
}

func fieldKeys(fields []node.Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Key
	}
	return out
}

// pathOutcome is the result of checking a path against declared outputs.
type pathOutcome struct {
	typ string // inferred type of the value ("any" when unknown)
	// problem, when set, is an error: which key is missing or what cannot
	// be traversed, at which prefix.
	problem string
	// missingKey is set when the problem is an unknown key.
	missingKey string
	missingAt  []node.Field // fields available where the key was missing
	prefixPath string       // path (after head) up to the problem
	// runtime is set when traversal continues into a string (JSON
	// auto-parse at run time) or an undocumented nested key.
	runtime string
}

// walkFields checks segs against fields. segs[0] must be a key.
func walkFields(head string, fields []node.Field, segs []template.Segment) pathOutcome {
	var o pathOutcome
	f, ok := findField(fields, segs[0].Key)
	if !ok {
		o.problem = "missing"
		o.missingKey = segs[0].Key
		o.missingAt = fields
		return o
	}
	typ := typeOrAny(f.Type)
	sub := f.Structure
	prefix := "." + f.Key
	for _, s := range segs[1:] {
		if s.IsIndex {
			switch {
			case hasMember(typ, "list"):
				elem := "any"
				for _, m := range members(typ) {
					if baseType(m) == "list" {
						elem = elemType(m)
						break
					}
				}
				if elem == "any" && len(sub) > 0 {
					elem = "dict"
				}
				typ = elem
			case hasMember(typ, "any"):
				return pathOutcome{typ: "any"}
			case hasMember(typ, "str"):
				o.runtime = prefix
				o.typ = "any"
				return o
			default:
				o.problem = fmt.Sprintf("${%s%s} is %s, not a list, so it cannot be indexed with %s", head, prefix, typ, s.String())
				o.prefixPath = prefix
				return o
			}
			prefix += s.String()
			continue
		}
		switch {
		case hasMember(typ, "dict"):
			if len(sub) == 0 {
				return pathOutcome{typ: "any"}
			}
			nf, ok := findField(sub, s.Key)
			if !ok {
				// Structures document the usual fields; other keys may exist.
				o.runtime = prefix
				o.missingKey = s.Key
				o.missingAt = sub
				o.prefixPath = prefix
				o.typ = "any"
				return o
			}
			typ, sub = typeOrAny(nf.Type), nf.Structure
		case hasMember(typ, "any"):
			return pathOutcome{typ: "any"}
		case hasMember(typ, "list"):
			o.problem = fmt.Sprintf("${%s%s} is a list (%s); pick an item first, e.g. ${%s%s[0].%s}", head, prefix, typ, head, prefix, s.Key)
			o.prefixPath = prefix
			return o
		case hasMember(typ, "str"):
			o.runtime = prefix
			o.typ = "any"
			return o
		default:
			o.problem = fmt.Sprintf("${%s%s} is %s and has no field '%s'", head, prefix, typ, s.Key)
			o.prefixPath = prefix
			return o
		}
		prefix += "." + s.Key
	}
	o.typ = typ
	return o
}

// batchFields are the outputs of a batch node (as in the Python pflow);
// results items carry the inner node's outputs plus item.
func batchFields(inner []node.Field, innerKnown bool) []node.Field {
	var item []node.Field
	if innerKnown {
		item = append(item, inner...)
	}
	if _, ok := findField(item, "item"); !ok && innerKnown {
		item = append(item, node.Field{Key: "item", Type: "any", Description: "The batch item this result belongs to."})
	}
	resType := "list[dict]"
	if !innerKnown {
		resType = "list"
	}
	return []node.Field{
		{Key: "results", Type: resType, Description: "One result per item, in input order", Structure: item},
		{Key: "count", Type: "int", Description: "Number of items"},
		{Key: "success_count", Type: "int", Description: "Items that succeeded"},
		{Key: "error_count", Type: "int", Description: "Items that failed"},
		{Key: "errors", Type: "list[dict]", Description: "Failed items", Structure: []node.Field{
			{Key: "index", Type: "int"}, {Key: "item", Type: "any"}, {Key: "error", Type: "str"}, {Key: "exception", Type: "any"},
		}},
		{Key: "batch_metadata", Type: "dict", Description: "Execution mode, concurrency and timing"},
		{Key: "error", Type: "str", Description: "Why the batch failed"},
	}
}
