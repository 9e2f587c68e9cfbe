// Package echo implements the hidden `echo` test node: it echoes a message
// (optionally decorated and repeated) and passes data through. Engine tests
// and benchmarks use it, so it does no I/O and allocates only its outputs.
package echo

import (
	"context"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
)

// DefaultMessage is echoed when the step sets no message.
const DefaultMessage = "Hello, World!"

// Spec returns the echo node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:       "echo",
		Group:      "test",
		Interface:  iface,
		Attempts:   1,
		Hidden:     true,
		Node:       node.Func(run),
		StdinParam: "message",
		MainOutput: "echo",
		// Pure, but too cheap to be worth a cache lookup: not cached by default.
		Effects: node.Effects{ReadOnly: true, Idempotent: true, Pure: true},
	}
}

var iface = node.Interface{
	Description: "Test node: echo a message (with optional prefix, suffix, repetition and upper-casing) and pass data through unchanged. No side effects.",
	Params: []node.Field{
		{Key: "message", Type: "str", Default: DefaultMessage, Description: "Message to echo."},
		{Key: "count", Type: "int", Default: int64(1), Description: "Number of times to repeat the message, joined by spaces."},
		{Key: "data", Type: "any", Description: "Any value, passed through unchanged to the data output."},
		{Key: "prefix", Type: "str", Default: "", Description: "Text put before the message."},
		{Key: "suffix", Type: "str", Default: "", Description: "Text put after the message."},
		{Key: "uppercase", Type: "bool", Default: false, Description: "Upper-case the result."},
	},
	Outputs: []node.Field{
		{Key: "echo", Type: "str", Description: "The echoed message after prefix, suffix, repetition and upper-casing."},
		{Key: "data", Type: "any", Description: "The data param, unchanged (only set when given)."},
		{Key: "metadata", Type: "dict", Description: "What the echo did.", Structure: []node.Field{
			{Key: "original_message", Type: "str", Description: "The message before any change."},
			{Key: "count", Type: "int", Description: "Number of repetitions."},
			{Key: "modified", Type: "bool", Description: "True when prefix, suffix, uppercase or count > 1 changed the message."},
		}},
	},
	Actions: []string{"default"},
}

func run(_ context.Context, req *node.Request) (*node.Result, error) {
	p := req.Params
	message := node.String(p, "message", DefaultMessage)
	count, err := node.Int(p, "count", 1)
	if err != nil {
		return nil, err
	}
	uppercase, err := node.Bool(p, "uppercase", false)
	if err != nil {
		return nil, err
	}
	prefix := node.String(p, "prefix", "")
	suffix := node.String(p, "suffix", "")

	echo := message
	if prefix != "" || suffix != "" {
		echo = prefix + message + suffix
	}
	if count > 1 {
		if count > 1<<20 || len(echo)*count > 64<<20 {
			return nil, &node.ParamError{Param: "count", Message: "is too large (the echo would exceed 64 MiB)"}
		}
		var b strings.Builder
		b.Grow(len(echo)*count + count - 1)
		for i := 0; i < count; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(echo)
		}
		echo = b.String()
	}
	if uppercase {
		echo = strings.ToUpper(echo)
	}
	out := make(map[string]any, 3)
	out["echo"] = echo
	if d, ok := p["data"]; ok && d != nil {
		out["data"] = d
	}
	out["metadata"] = map[string]any{
		"original_message": message,
		"count":            int64(count),
		"modified":         prefix != "" || suffix != "" || uppercase || count > 1,
	}
	return &node.Result{Outputs: out}, nil
}
