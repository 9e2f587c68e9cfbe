package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// rawMCP is a hand-rolled MCP client over a spawned `pflow mcp serve`: it
// writes whatever frames a test wants (malformed ones included) and routes
// the replies by id.
type rawMCP struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	wmu    sync.Mutex
	mu     sync.Mutex
	byID   map[string]chan map[string]any
	nullID chan map[string]any // replies with "id": null (parse errors)
	stderr *bytes.Buffer
	raw    *bytes.Buffer // every byte of stdout, for leak scans
	exited chan struct{}
	nextID int
}

type lockedBuf struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// startServe spawns `pflow mcp serve` and performs the initialize handshake.
func startServe(t *testing.T, root string, extraEnv []string) *rawMCP {
	t.Helper()
	cmd := exec.Command(pflowBin(t), "mcp", "serve")
	cmd.Env = env(root, extraEnv...)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &rawMCP{t: t, cmd: cmd, in: in, byID: map[string]chan map[string]any{},
		nullID: make(chan map[string]any, 100), stderr: &bytes.Buffer{}, raw: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = &lockedBuf{b: c.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rawW := &lockedBuf{b: c.raw}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				rawW.Write(line)
				var msg map[string]any
				if json.Unmarshal(line, &msg) == nil {
					c.route(msg)
				}
			}
			if err != nil {
				break
			}
		}
		cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(c.close)
	init := c.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "hostile-test", "version": "1"},
	})
	if init["error"] != nil {
		t.Fatalf("initialize: %v", init["error"])
	}
	c.notify("notifications/initialized", nil)
	return c
}

func (c *rawMCP) route(msg map[string]any) {
	id, has := msg["id"]
	if !has {
		return // a notification from the server
	}
	if id == nil {
		c.nullID <- msg
		return
	}
	key := fmt.Sprint(id)
	c.mu.Lock()
	ch := c.byID[key]
	c.mu.Unlock()
	if ch != nil {
		ch <- msg
	}
}

func (c *rawMCP) waiter(id string) chan map[string]any {
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	c.byID[id] = ch
	c.mu.Unlock()
	return ch
}

// sendRaw writes one frame (a newline is added).
func (c *rawMCP) sendRaw(frame string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.in, frame+"\n"); err != nil {
		c.t.Errorf("writing to pflow mcp serve: %v (server exited? stderr: %s)", err, c.stderrText())
	}
}

func (c *rawMCP) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
}

func (c *rawMCP) notify(method string, params any) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
}

// start sends a request and returns the channel its reply arrives on.
func (c *rawMCP) start(method string, params any) chan map[string]any {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	ch := c.waiter(fmt.Sprint(id))
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
	return ch
}

// wait returns the reply on ch, failing the test after 60 s or when the
// server exits.
func (c *rawMCP) wait(ch chan map[string]any, what string) map[string]any {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-c.exited:
		c.t.Fatalf("%s: pflow mcp serve exited instead of answering; stderr:\n%s", what, c.stderrText())
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no answer within 60 s; stderr:\n%s", what, c.stderrText())
	}
	return nil
}

func (c *rawMCP) request(method string, params any) map[string]any {
	c.t.Helper()
	return c.wait(c.start(method, params), method)
}

// call runs tools/call and returns the whole JSON-RPC reply.
func (c *rawMCP) call(tool string, args any) map[string]any {
	c.t.Helper()
	return c.request("tools/call", map[string]any{"name": tool, "arguments": args})
}

func (c *rawMCP) stderrText() string {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.stderr.String()
}

// alive checks that the server process runs and answers tools/list.
func (c *rawMCP) alive(after string) {
	c.t.Helper()
	select {
	case <-c.exited:
		c.t.Fatalf("after %s: pflow mcp serve exited; stderr:\n%s", after, c.stderrText())
	default:
	}
	r := c.wait(c.start("tools/list", map[string]any{}), "tools/list after "+after)
	res, _ := r["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	if len(tools) == 0 {
		c.t.Fatalf("after %s: tools/list answered %v", after, r)
	}
}

func (c *rawMCP) close() {
	c.in.Close()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.t.Errorf("pflow mcp serve did not exit within 10 s of stdin closing")
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
}

// rpcErrorCode is the JSON-RPC error code of a reply (0 when none).
func rpcErrorCode(r map[string]any) int {
	e, _ := r["error"].(map[string]any)
	if e == nil {
		return 0
	}
	f, _ := e["code"].(float64)
	return int(f)
}

// toolEnvelope returns a tools/call result's isError flag and the pflow
// envelope in structuredContent.
func toolEnvelope(r map[string]any) (isError bool, env map[string]any) {
	res, _ := r["result"].(map[string]any)
	isError, _ = res["isError"].(bool)
	env, _ = res["structuredContent"].(map[string]any)
	return isError, env
}

func envelopeErrType(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func envelopeErrMsg(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return strings.TrimSpace(s)
}
