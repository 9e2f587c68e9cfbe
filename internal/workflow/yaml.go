package workflow

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// yamlBudget bounds the number of nodes (after alias expansion) one YAML
// fragment may produce, so alias bombs cannot exhaust memory.
const yamlBudget = 1_000_000

var errYAMLTooBig = errors.New("YAML is too large or expands too many aliases")

// parseYAML parses one YAML document into the canonical value model.
// Timestamps and other non-core scalars stay strings, as written.
func parseYAML(text string) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	budget := yamlBudget
	return yamlValue(&doc, &budget, 0)
}

func yamlValue(n *yaml.Node, budget *int, depth int) (any, error) {
	*budget--
	if *budget < 0 || depth > 200 {
		return nil, errYAMLTooBig
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], budget, depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return yamlValue(n.Alias, budget, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		keyLine := make(map[string]int, len(n.Content)/2)
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				merges = append(merges, v)
				continue
			}
			key, err := yamlKey(k)
			if err != nil {
				return nil, err
			}
			if prev, dup := keyLine[key]; dup {
				return nil, fmt.Errorf("line %d: mapping key %q already defined at line %d", k.Line, key, prev)
			}
			keyLine[key] = k.Line
			val, err := yamlValue(v, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out[key] = val
		}
		for _, m := range merges {
			mv, err := yamlValue(m, budget, depth+1)
			if err != nil {
				return nil, err
			}
			var srcs []any
			switch x := mv.(type) {
			case map[string]any:
				srcs = []any{x}
			case []any:
				srcs = x
			}
			for _, s := range srcs {
				if sm, ok := s.(map[string]any); ok {
					for k, v := range sm {
						if _, exists := out[k]; !exists {
							out[k] = v
						}
					}
				}
			}
		}
		return out, nil
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, nil
}

func yamlKey(k *yaml.Node) (string, error) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: mapping keys must be plain names, not lists or mappings", k.Line)
	}
	if k.Value == "" && k.ShortTag() == "!!null" {
		return "null", nil
	}
	return k.Value, nil
}

func yamlScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return n.Value, nil
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err == nil {
			return f, nil
		}
		return n.Value, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return n.Value, nil
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			// Not representable in JSON; keep the text.
			return n.Value, nil
		}
		return f, nil
	default:
		return n.Value, nil
	}
}

var yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// yamlErrorText renders a YAML library error with its line numbers mapped to
// file lines by toFile (which receives the 1-based line within the fragment).
func yamlErrorText(err error, toFile func(int) int) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.ReplaceAll(msg, "\n", " ")
	msg = strings.Join(strings.Fields(msg), " ")
	return yamlLineRe().ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(toFile(n))
	})
}

var (
	fastKeyRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })
	fastValueRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z$/_][A-Za-z0-9 ${}./@_+=,-]*$`) })
	fastIntRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0|[1-9][0-9]{0,17})$`) })
)

// fastItem parses the common one-line item "- key: value" without the YAML
// parser when the value is a plain scalar whose meaning is unambiguous: a
// small decimal integer, true/false, null, or text made of characters that
// cannot change how YAML reads it. Anything else returns ok=false and goes
// through the YAML parser (FuzzFastItem checks the two agree).
func fastItem(line string) (key string, val any, ok bool) {
	rest, found := strings.CutPrefix(line, "- ")
	if !found {
		return "", nil, false
	}
	key, v, found := strings.Cut(rest, ": ")
	if !found || len(key) > 128 || !fastKeyRe().MatchString(key) {
		return "", nil, false
	}
	v = strings.TrimLeft(v, " ")
	v = strings.TrimRight(v, " ")
	if v == "" {
		return "", nil, false
	}
	if fastIntRe().MatchString(v) {
		i, err := strconv.ParseInt(v, 10, 64)
		return key, i, err == nil
	}
	if !fastValueRe().MatchString(v) {
		return "", nil, false
	}
	switch v {
	case "true", "True", "TRUE":
		return key, true, true
	case "false", "False", "FALSE":
		return key, false, true
	case "null", "Null", "NULL":
		return key, nil, true
	}
	switch strings.ToLower(v) {
	case ".inf", ".nan", "-.inf", "+.inf":
		return "", nil, false
	}
	return key, v, true
}
