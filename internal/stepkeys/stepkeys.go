// Package stepkeys is the one table of the keys a workflow step may carry
// besides its node's own params: the keys the markdown parser turns into the
// IR (type, batch, edges, mappings), the controls the engine consumes before
// the node runs (retries, retry_wait, cache), and the controls an MCP step
// keeps from its tool (timeout, args).
//
// The parser, validation, the runtime, the markdown writer, the docs and the
// agent guide all read this table, so that a key one of them accepts is never
// refused or ignored by another. Each control's value is parsed here once:
// validation checks a literal value with the same function the runtime uses.
package stepkeys

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/cond"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

// Kind says who consumes a step key.
type Kind int

const (
	// Structure keys are read by the markdown parser into the IR (the node's
	// type and batch, edges, mappings); they never reach a node as params. In
	// JSON IR they are node fields, edges and the workflow's mappings.
	Structure Kind = iota + 1
	// Control keys are step params the engine consumes before the node runs.
	Control
	// MCPControl keys are params an MCP step keeps for itself instead of
	// passing them to the tool as arguments.
	MCPControl
)

// Key is one step key.
type Key struct {
	Name string
	Kind Kind
	// What names what the key sets, for messages ("retry count").
	What string
	// Takes says what value the key takes, as the docs show it.
	Takes string
	// Meaning says what the key does, as the docs show it.
	Meaning string
	// YieldsToNode is true when a node that declares a param of the same
	// name receives the value instead (the key is then the node's param).
	YieldsToNode bool
	// Check validates a literal value the way the run will; nil when the
	// parser checks the value itself.
	Check func(v any) error
}

// Names of the keys the code refers to.
const (
	Type           = "type"
	Batch          = "batch"
	Next           = "next"
	On             = "on"
	OnError        = "on_error"
	InputMappings  = "input_mappings"
	OutputMappings = "output_mappings"
	Retries        = "retries"
	RetryWait      = "retry_wait"
	Cache          = "cache"
	Timeout        = "timeout"
	Args           = "args"
	When           = "when"
	After          = "after"
)

// MaxRetries is the most extra attempts a step may ask for.
const MaxRetries = 10

var table = []Key{
	{Name: Type, What: "node type", Kind: Structure, Takes: "a node type", Meaning: "the node type (`pflow registry list`)"},
	{Name: Batch, What: "batch", Kind: Structure, Takes: "`{items, as, parallel, max_concurrent, error_handling, max_retries, retry_wait}`", Meaning: "run the step once per item (below)"},
	{Name: Next, What: "next step", Kind: Structure, Takes: "a step id", Meaning: "the step that runs after this one (default: the next step in the file)"},
	{Name: On, What: "edges", Kind: Structure, Takes: "`{<action>: <step>}`", Meaning: "one edge per action: `default`, `error`, for `http` and MCP steps the error classes below, for `ask` steps their answers"},
	{Name: OnError, What: "error edge", Kind: Structure, Takes: "a step id", Meaning: "where to go when this step fails (sugar for `on: {error: <step>}`)"},
	{Name: InputMappings, What: "input mappings", Kind: Structure, Takes: "`{<param>: <path>}`", Meaning: "fill a param from a shared-store path when the step does not set it"},
	{Name: OutputMappings, What: "output mappings", Kind: Structure, Takes: "`{<output>: <name>}`", Meaning: "also publish an output at the workflow level as `${name}`"},
	{Name: Retries, What: "retry count", Kind: Control, Takes: "a whole number 0–10", Meaning: "retry a failing step: `retries: 2` = up to 2 more attempts",
		Check: func(v any) error { _, err := ParseRetries(v); return err }},
	{Name: RetryWait, What: "wait between retries", Kind: Control, Takes: "seconds or a duration", Meaning: "the wait between attempts: `retry_wait: 1s`, `retry_wait: 0.5`",
		Check: func(v any) error { _, err := ParseRetryWait(v); return err }},
	{Name: Cache, What: "cache setting", Kind: Control, YieldsToNode: true, Takes: "`true`, `false` or a duration (`30m`, `1h`, `7d`)", Meaning: "serve the step from the step cache (`true`: the default TTL; a duration: that TTL; `false`: never); see [runs.md](runs.md#step-cache)",
		Check: func(v any) error { _, err := ParseCache(v); return err }},
	{Name: When, What: "condition", Kind: Control, YieldsToNode: true, Takes: "a condition", Meaning: "run the step only when the condition holds, else it is *skipped*: `when: ${count.stdout} > 0` (see [Conditions](#conditions))",
		Check: func(v any) error { _, err := ParseWhen(v); return err }},
	{Name: After, What: "ordering", Kind: Control, YieldsToNode: true, Takes: "a step id or a list of them", Meaning: "in a `parallel` workflow, wait for these steps even without reading their outputs (a file one writes and the other reads)",
		Check: func(v any) error { _, err := ParseAfter(v); return err }},
	{Name: Timeout, What: "call timeout (seconds)", Kind: MCPControl, Takes: "seconds or a duration", Meaning: "an MCP step's call timeout (other nodes declare their own `timeout` param)",
		Check: func(v any) error {
			_, err := parseDuration(Timeout, v)
			return err
		}},
	{Name: Args, What: "tool arguments", Kind: MCPControl, Takes: "`{<argument>: <value>}`", Meaning: "an MCP step's tool arguments passed as written: the way to pass an argument named like a step key (`- args: {type: jpeg}`)"},
}

// All returns every step key, in the order the docs list them.
func All() []Key { return slices.Clone(table) }

// Lookup returns the key called name.
func Lookup(name string) (Key, bool) {
	for _, k := range table {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// Names returns the names of the keys of the given kinds (every key when
// none is given), in table order.
func Names(kinds ...Kind) []string {
	var out []string
	for _, k := range table {
		if len(kinds) == 0 || slices.Contains(kinds, k.Kind) {
			out = append(out, k.Name)
		}
	}
	return out
}

// Consumed reports whether a step param called name is a step control that
// the engine or the MCP step keeps, rather than the node's own param (or an
// MCP tool's argument). declared tells whether the node declares a param of
// that name; mcp whether the step calls an MCP tool. The args block is not
// covered: it is the step's only when it is a map.
func Consumed(name string, declared, mcp bool) bool {
	k, ok := Lookup(name)
	if !ok {
		return false
	}
	switch k.Kind {
	case Control:
		return !(k.YieldsToNode && declared)
	case MCPControl:
		return mcp && k.Name != Args
	}
	return false
}

// IsStructure reports whether name is read by the parser into the IR.
func IsStructure(name string) bool {
	k, ok := Lookup(name)
	return ok && k.Kind == Structure
}

// Instead says what to write in place of a key that other tools use, or
// that belongs elsewhere in pflow.
type Instead struct {
	// Key is the step key to write instead, when there is one.
	Key string
	// Say is the sentence that says how.
	Say string
}

// misplaced maps keys written on a step that pflow does not take there to
// what to write instead. Validation says it when one is written on a step
// whose node has no param of that name.
var misplaced = sync.OnceValue(func() map[string]Instead {
	return map[string]Instead{
		"cache_ttl":       {Key: "cache", Say: "write the TTL as the step's cache: '- cache: 1h'"},
		"ttl":             {Key: "cache", Say: "write the TTL as the step's cache: '- cache: 1h'"},
		"cached":          {Key: "cache", Say: "write '- cache: true'"},
		"use_cache":       {Key: "cache", Say: "write '- cache: true'"},
		"retry":           {Key: "retries", Say: "write '- retries: 2' (extra attempts, 0–10)"},
		"max_retries":     {Key: "retries", Say: "on a step write '- retries: 2' (extra attempts); max_retries belongs in a batch"},
		"attempts":        {Key: "retries", Say: "write '- retries: 2' (extra attempts after the first)"},
		"retry_delay":     {Key: "retry_wait", Say: "write '- retry_wait: 1s'"},
		"retry_interval":  {Key: "retry_wait", Say: "write '- retry_wait: 1s'"},
		"backoff":         {Key: "retry_wait", Say: "write '- retry_wait: 1s' (the wait between attempts)"},
		"onerror":         {Key: "on_error", Say: "write '- on_error: <step>'"},
		"on_failure":      {Key: "on_error", Say: "write '- on_error: <step>'"},
		"on_fail":         {Key: "on_error", Say: "write '- on_error: <step>'"},
		"depends_on":      {Key: "after", Say: "steps run in file order (write '- next: <step>' on the step before to change it); in a workflow with '- parallel: true' under '## Steps' write '- after: [<step>]' to wait for a step whose outputs it does not read"},
		"needs":           {Key: "after", Say: "steps run in file order (write '- next: <step>' on the step before to change it); in a workflow with '- parallel: true' under '## Steps' write '- after: [<step>]' to wait for a step whose outputs it does not read"},
		"if":              {Key: "when", Say: "write the condition as '- when: ${count.stdout} > 0'"},
		"condition":       {Key: "when", Say: "write the condition as '- when: ${count.stdout} > 0'"},
		"only_if":         {Key: "when", Say: "write the condition as '- when: ${count.stdout} > 0'"},
		"unless":          {Key: "when", Say: "write the negated condition as '- when: not (...)'"},
		"trust_readonly":  {Key: "", Say: "trust is a property of the MCP server, not of a step: set \"trust_readonly\": true in the server's config (mcp-servers.json), or run with --trust-readonly"},
		"keep_alive":      {Key: "", Say: "keep_alive is a property of the MCP server, not of a step: set it in the server's config (mcp-servers.json)"},
		"timeout_ms":      {Key: "timeout", Say: "pflow timeouts are seconds or durations: write '- timeout: 30' or '- timeout: 500ms'"},
		"timeout_seconds": {Key: "timeout", Say: "write '- timeout: 30' (seconds) or '- timeout: 1m'"},
		"description":     {Key: "", Say: "a step's description is the prose under its heading, not a key"},
		"id":              {Key: "", Say: "a step's id is its '### heading'"},
		"name":            {Key: "", Say: "a step's id is its '### heading'"},
	}
})

// Misplaced says what to write instead of name, when name is a key that
// other tools use or that belongs elsewhere in pflow.
func Misplaced(name string) (Instead, bool) {
	i, ok := misplaced()[strings.ToLower(name)]
	return i, ok
}

// ParseRetries reads a retries value: a whole number from 0 to 10.
func ParseRetries(v any) (int, error) {
	bad := fmt.Errorf("'retries' must be a whole number from 0 to %d (extra attempts after the first), got %s", MaxRetries, value.Stringify(v))
	r, err := node.Int(map[string]any{Retries: v}, Retries, 0)
	if err != nil || r < 0 || r > MaxRetries {
		return 0, bad
	}
	return r, nil
}

// ParseRetryWait reads a retry_wait value: seconds or a duration.
func ParseRetryWait(v any) (time.Duration, error) { return parseDuration(RetryWait, v) }

func parseDuration(key string, v any) (time.Duration, error) {
	d, err := node.Duration(map[string]any{key: v}, key, 0)
	if err != nil {
		return 0, fmt.Errorf("'%s' %s; write e.g. '- %s: 10', '- %s: 10s' or '- %s: 1m30s'", key, err.(*node.ParamError).Message, key, key, key)
	}
	return d, nil
}

// CacheSetting is a step's cache control: `cache: true` (the default TTL),
// `cache: 1h` (a TTL), `cache: false` (never), or absent (the node type's
// default).
type CacheSetting struct {
	// Set is true when the step has a cache control.
	Set bool
	// On is the step's choice when Set.
	On bool
	// TTL is how long an entry stays valid (0: the cache's default).
	TTL time.Duration
}

// ParseCache reads a cache value: a boolean, or a duration such as 90s, 30m,
// 1h or 7d (a bare number is seconds).
func ParseCache(v any) (CacheSetting, error) {
	bad := fmt.Errorf("'cache' must be true, false or how long results stay valid (e.g. 30m, 1h, 7d), got %s", value.Stringify(v))
	switch x := v.(type) {
	case nil:
		return CacheSetting{}, nil
	case bool:
		return CacheSetting{Set: true, On: x}, nil
	case int64, float64, int:
		d, err := node.Duration(map[string]any{Cache: x}, Cache, 0)
		if err != nil || d <= 0 {
			return CacheSetting{}, bad
		}
		return CacheSetting{Set: true, On: true, TTL: d}, nil
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		switch s {
		case "true", "yes", "on":
			return CacheSetting{Set: true, On: true}, nil
		case "false", "no", "off":
			return CacheSetting{Set: true}, nil
		}
		if days, ok := strings.CutSuffix(s, "d"); ok {
			n, err := strconv.ParseFloat(days, 64)
			if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
				return CacheSetting{}, bad
			}
			return CacheSetting{Set: true, On: true, TTL: time.Duration(n * float64(24*time.Hour))}, nil
		}
		d, err := node.Duration(map[string]any{Cache: s}, Cache, 0)
		if err != nil || d <= 0 {
			return CacheSetting{}, bad
		}
		return CacheSetting{Set: true, On: true, TTL: d}, nil
	}
	return CacheSetting{}, bad
}

// MarkdownTable renders the table as docs/workflow-format.md shows it (a
// test keeps the two the same).
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| key | takes | meaning |\n| --- | --- | --- |\n")
	for _, k := range table {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, k.Takes, k.Meaning)
	}
	return b.String()
}

// ParseWhen reads a when value: a condition (package cond) or a literal
// true or false.
func ParseWhen(v any) (*cond.Expr, error) {
	switch t := v.(type) {
	case bool:
		return cond.Compile(strconv.FormatBool(t))
	case string:
		x, err := cond.Compile(t)
		if err != nil {
			return nil, fmt.Errorf("'when': %w", err)
		}
		return x, nil
	}
	return nil, fmt.Errorf("'when' must be a condition such as '${count.stdout} > 0', got %s", value.Stringify(v))
}

// ParseAfter reads an after value: one step id or a list of them.
func ParseAfter(v any) ([]string, error) {
	switch t := v.(type) {
	case string:
		return []string{t}, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("'after' must list step ids, got %s", value.Stringify(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("'after' must be a step id or a list of step ids, got %s", value.Stringify(v))
}
