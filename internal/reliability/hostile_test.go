package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHostileClientMalformedFrames sends frames that are not valid JSON-RPC
// to `pflow mcp serve` over stdio. JSON-RPC 2.0 says each gets an error
// reply (-32700 Parse error / -32600 Invalid Request, with id null when the
// id cannot be read); the server must stay up and keep serving.
func TestHostileClientMalformedFrames(t *testing.T) {
	frames := []struct {
		name, frame string
		code        int
	}{
		{"truncated object", `{"jsonrpc":"2.0","id":100,"method":`, -32700},
		{"not json", `{not json`, -32700},
		{"binary junk", "\x00\x01\x02\xff\xfe garbage", -32700},
		{"bare string", `"hello"`, -32600},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, -32600},
		{"empty batch", `[]`, -32600},
		{"no method", `{"jsonrpc":"2.0","id":"no-method"}`, -32600},
		// Ids that are not a string or an integer (each
		// of these made the stdio server exit).
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, -32600},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, -32600},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`, -32600},
	}
	for _, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			c := startServe(t, t.TempDir(), nil)
			byID := c.waiter("no-method") // the one frame whose id is readable
			c.sendRaw(f.frame)
			// The server must still answer.
			c.alive("the frame " + fmt.Sprintf("%q", f.frame))
			var r map[string]any
			select {
			case r = <-c.nullID:
			case r = <-byID:
			case <-time.After(60 * time.Second): // only a hung server gets here
				t.Fatalf("frame %q: no JSON-RPC error reply (want code %d)", f.frame, f.code)
			}
			if got := rpcErrorCode(r); got != f.code {
				t.Errorf("frame %q: reply %s, want error code %d", f.frame, short(r), f.code)
			}
		})
	}
}

// TestHostileClientStaysUp drives one server through unknown methods, bad
// tool calls, a 10 MB argument, path-traversal names and 50 concurrent
// calls; each gets the right error and the server keeps serving.
func TestHostileClientStaysUp(t *testing.T) {
	root := t.TempDir()
	c := startServe(t, root, nil)

	t.Run("unknown method", func(t *testing.T) {
		r := c.request("bogus/method", map[string]any{})
		if rpcErrorCode(r) != -32601 {
			t.Errorf("unknown method: %s, want error -32601", short(r))
		}
		c.alive("an unknown method")
	})

	t.Run("unknown tool", func(t *testing.T) {
		r := c.call("no_such_tool", map[string]any{})
		isErr, env := toolEnvelope(r)
		if rpcErrorCode(r) != -32602 && !isErr {
			t.Errorf("unknown tool: %s, want error -32602 or an isError result", short(r))
		}
		_ = env
	})

	t.Run("arguments not an object", func(t *testing.T) {
		r := c.call("workflow_list", "a string")
		isErr, env := toolEnvelope(r)
		if msg, _ := env["error"].(map[string]any)["message"].(string); !isErr || envelopeErrType(env) != "validation" || !strings.HasPrefix(msg, "arguments of workflow_list must be a JSON object") {
			t.Errorf("string arguments: %s", short(r))
		}
	})

	t.Run("unexpected argument", func(t *testing.T) {
		isErr, env := toolEnvelope(c.call("workflow_list", map[string]any{"bogus": 1}))
		if !isErr || envelopeErrType(env) != "validation" || !strings.Contains(envelopeErrMsg(env), "bogus") {
			t.Errorf("unexpected argument: isError=%v %s", isErr, short(env))
		}
	})

	t.Run("10 MB argument", func(t *testing.T) {
		big := strings.Repeat("x", 10<<20)
		isErr, env := toolEnvelope(c.call("workflow_validate", map[string]any{"workflow": big}))
		if !isErr || envelopeErrType(env) != "validation" {
			t.Errorf("10 MB name: isError=%v %s", isErr, short(env))
		}
		// A 10 MB markdown document: a valid workflow with a huge description.
		md := "# Big\n" + strings.Repeat("A long description line.\n", (10<<20)/25) +
			"\n## Steps\n\n### say\nSay hi.\n- type: shell\n- command: echo hi\n"
		r := c.call("workflow_validate", map[string]any{"workflow": md})
		if r["error"] != nil {
			t.Errorf("10 MB workflow: JSON-RPC error %s", short(r))
		}
		c.alive("10 MB arguments")
	})

	t.Run("path traversal names", func(t *testing.T) {
		cases := []struct {
			tool string
			args map[string]any
		}{
			{"workflow_describe", map[string]any{"name": "../../etc/passwd"}},
			{"workflow_execute", map[string]any{"workflow": "../settings"}},
			{"workflow_save", map[string]any{"workflow_file": "# X\nx\n\n## Steps\n\n### a\nA.\n- type: shell\n- command: echo\n", "name": "../escape", "description": "x"}},
			{"trace_read", map[string]any{"trace_file": "../settings.json"}},
			{"trace_read", map[string]any{"trace_file": "/etc/passwd"}},
			{"registry_describe", map[string]any{"nodes": []any{"../../x"}}},
		}
		for _, tc := range cases {
			isErr, env := toolEnvelope(c.call(tc.tool, tc.args))
			if !isErr || envelopeErrType(env) != "security" {
				t.Errorf("%s %v: isError=%v %s, want a security error", tc.tool, tc.args, isErr, short(env))
			}
		}
		if m := tempFilesIn(t, root, "escape"); len(m) > 0 {
			t.Errorf("a refused save wrote %v", m)
		}
		c.alive("path-traversal names")
	})

	t.Run("50 concurrent calls", func(t *testing.T) {
		type pending struct {
			tool string
			ch   chan map[string]any
		}
		var ps []pending
		for i := 0; i < 50; i++ {
			var p pending
			switch i % 4 {
			case 0:
				p = pending{"workflow_list", c.start("tools/call", map[string]any{"name": "workflow_list", "arguments": map[string]any{}})}
			case 1:
				p = pending{"registry_list", c.start("tools/call", map[string]any{"name": "registry_list", "arguments": map[string]any{}})}
			case 2:
				p = pending{"workflow_validate", c.start("tools/call", map[string]any{"name": "workflow_validate", "arguments": map[string]any{
					"workflow": fmt.Sprintf("# W%d\nw.\n\n## Steps\n\n### a\nA.\n- type: shell\n- command: echo %d\n", i, i)}})}
			case 3:
				p = pending{"registry_run", c.start("tools/call", map[string]any{"name": "registry_run", "arguments": map[string]any{
					"node_type": "shell", "parameters": map[string]any{"command": fmt.Sprintf("echo call-%d", i)}}})}
			}
			ps = append(ps, p)
		}
		for i, p := range ps {
			r := c.wait(p.ch, fmt.Sprintf("concurrent call %d (%s)", i, p.tool))
			isErr, env := toolEnvelope(r)
			if r["error"] != nil || isErr {
				t.Errorf("concurrent call %d (%s) failed: %s", i, p.tool, short(r))
				continue
			}
			if p.tool == "registry_run" && !strings.Contains(short(env), fmt.Sprintf("call-%d", i)) {
				t.Errorf("concurrent call %d got another call's answer: %s", i, short(env))
			}
		}
		c.alive("50 concurrent calls")
	})
}
