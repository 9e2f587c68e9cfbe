package runtime

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// InputError is one problem with a workflow input.
type InputError struct {
	Input   string `json:"input"`
	Message string `json:"message"`
	Path    string `json:"path"`
	// Missing marks a required input that was not given (as opposed to one
	// given with a wrong value, or one the workflow does not declare).
	Missing bool `json:"-"`
	// Env is the environment variable a missing input is read from
	// ('- env: NAME'), which is not set: the fix is to set it, not to pass
	// the value (usually a secret) as a parameter.
	Env string `json:"env,omitempty"`
	// Line is the line of the input's declaration in a .pflow.md file (0
	// when unknown, or for an input the workflow does not declare).
	Line int `json:"line,omitempty"`
}

func (e InputError) Error() string { return e.Message }

// InputSource says where a prepared input value came from.
type InputSource string

// Input sources, in precedence order.
const (
	FromParams   InputSource = "params"
	FromEnv      InputSource = "env"
	FromSettings InputSource = "settings"
	FromDefault  InputSource = "default"
	FromNone     InputSource = "none"
)

// Prepared is the result of preparing inputs.
type Prepared struct {
	// Values holds every declared input (nil for an absent optional one) plus
	// any undeclared params, ready to be the root of the shared store.
	Values map[string]any
	// Sources records where each declared input came from.
	Sources map[string]InputSource
}

// EnvLookup separates the two configuration sources inputs can come from.
type EnvLookup struct {
	Process  func(string) (string, bool)
	Settings func(string) (string, bool)
}

// PrepareInputs fills and coerces declared inputs. Precedence: the provided
// params (CLI key=value, routed stdin, MCP arguments, parent mappings), then
// the process environment variable the input names ('- env: NAME'; never one
// that merely shares its name), then settings.json env
// (case-insensitive), then the declared default; an optional input without
// any becomes nil.
// Raw strings (from the CLI) are read according to the declared type;
// undeclared params are kept as given.
func PrepareInputs(w *workflow.Workflow, provided map[string]any, env EnvLookup) (*Prepared, []InputError) {
	p := &Prepared{Values: make(map[string]any, len(provided)+len(w.Inputs)), Sources: map[string]InputSource{}}
	for k, v := range provided {
		p.Values[k] = v
	}
	var errs []InputError
	for _, in := range w.Inputs {
		raw, ok := provided[in.Name]
		src := FromParams
		if !ok && env.Process != nil && in.Env != "" {
			// Only the variable the input names (see docs/decisions.md, "Inputs
			// come from explicit sources"): an input called
			// path never takes $PATH.
			if s, found := env.Process(in.Env); found {
				raw, ok, src = s, true, FromEnv
			}
		}
		if !ok && env.Settings != nil {
			// The variable the input names ('pflow settings set-env
			// GITHUB_TOKEN=…'), then the input's own name.
			for _, k := range []string{in.Env, in.Name} {
				if k == "" {
					continue
				}
				if s, found := env.Settings(k); found {
					raw, ok, src = s, true, FromSettings
					break
				}
			}
		}
		if !ok {
			if !in.IsRequired() {
				p.Values[in.Name] = value.Clone(in.Default)
				if in.Default != nil {
					p.Sources[in.Name] = FromDefault
				} else {
					p.Sources[in.Name] = FromNone
				}
				continue
			}
			desc := in.Description
			if desc == "" {
				desc = "No description provided"
			}
			ie := InputError{Input: in.Name, Path: "inputs." + in.Name, Missing: true, Env: in.Env, Line: in.Line,
				Message: fmt.Sprintf("Workflow requires input '%s': %s", in.Name, desc)}
			if in.Env != "" {
				ie.Message += fmt.Sprintf(" (it is read from the environment variable %s, which is not set)", in.Env)
			}
			if env.Process != nil && in.Env == "" {
				// A variable of the input's name is never read on its own;
				// say how to read it when one is set.
				for _, k := range []string{in.Name, strings.ToUpper(in.Name)} {
					if _, found := env.Process(k); found {
						ie.Message += fmt.Sprintf(" ($%s is set, but an input reads the environment only when it declares '- env: %s')", k, k)
						break
					}
				}
			}
			errs = append(errs, ie)
			continue
		}
		v, err := Coerce(raw, in.Type)
		if err != nil {
			errs = append(errs, InputError{Input: in.Name, Path: "inputs." + in.Name, Line: in.Line,
				Message: fmt.Sprintf("Input '%s' %s", in.Name, err.Error())})
			continue
		}
		p.Values[in.Name] = v
		p.Sources[in.Name] = src
	}
	return p, errs
}

// NormalizeType maps the accepted type aliases to pflow's canonical names:
// str, int, float, bool, dict, list, any ("" stays ""); see
// value.CanonicalType, the one place that defines them.
func NormalizeType(t string) string { return value.CanonicalType(t) }

// Coerce converts v to the declared input type without losing data. A string
// stays a string for type string ("007" is kept); numbers must parse exactly;
// JSON text is parsed for object/array. nil is never coerced. An undeclared
// type keeps v, inferring a type for raw strings.
func Coerce(v any, declared string) (any, error) {
	if v == nil {
		return nil, nil
	}
	t := NormalizeType(declared)
	s, isStr := v.(string)
	switch t {
	case "", "any":
		return v, nil
	case "str":
		if isStr {
			return s, nil
		}
		return value.Stringify(v), nil
	case "int":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		case string:
			if i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return i, nil
			}
		}
		return nil, fmt.Errorf("expects an integer, got %s", describe(v))
	case "float":
		switch x := v.(type) {
		case int64:
			return x, nil // an integer is a valid number; keep it exact
		case float64:
			return x, nil
		case string:
			t := strings.TrimSpace(x)
			if i, err := strconv.ParseInt(t, 10, 64); err == nil {
				return i, nil
			}
			if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f, nil
			}
		}
		return nil, fmt.Errorf("expects a number, got %s", describe(v))
	case "bool":
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "yes", "1":
				return true, nil
			case "false", "no", "0":
				return false, nil
			}
		}
		return nil, fmt.Errorf("expects a boolean (true/false), got %s", describe(v))
	case "dict":
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
		if isStr {
			if p, ok := value.TryParseContainer(s); ok {
				if m, ok := p.(map[string]any); ok {
					return m, nil
				}
			}
		}
		return nil, fmt.Errorf("expects an object (JSON like {\"key\": \"value\"}), got %s", describe(v))
	case "list":
		if l, ok := v.([]any); ok {
			return l, nil
		}
		if isStr {
			if p, ok := value.TryParseContainer(s); ok {
				if l, ok := p.([]any); ok {
					return l, nil
				}
			}
		}
		return nil, fmt.Errorf("expects an array (JSON like [1, 2]), got %s", describe(v))
	}
	return v, nil
}

func describe(v any) string {
	s := value.Stringify(v)
	if len(s) > 60 {
		s = value.Truncate(s, 57, "...")
	}
	return fmt.Sprintf("%s %q", value.TypeName(v), s)
}
