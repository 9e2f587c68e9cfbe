package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/pferr"
)

func TestWorkflowExecuteReportsProgressPerStep(t *testing.T) {
	f := newFixture(t, nil)
	md := "# Three\nThree steps.\n\n## Steps\n\n### a\nOne.\n- type: echo\n- message: a\n\n### b\nTwo.\n- type: echo\n- message: b\n\n### c\nThree.\n- type: echo\n- message: c\n"
	f.callCtx(context.Background(), "workflow_execute", map[string]any{"workflow": md}, "tok-1").mustOK(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.progMu.Lock()
		n := len(f.progress)
		f.progMu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.progMu.Lock()
	defer f.progMu.Unlock()
	if len(f.progress) != 3 {
		t.Fatalf("want 3 progress notifications, got %d", len(f.progress))
	}
	last := 0.0
	for i, p := range f.progress {
		if p.ProgressToken != "tok-1" || p.Progress <= last || p.Total != 3 {
			t.Fatalf("notification %d: %+v", i, p)
		}
		last = p.Progress
	}
	if !strings.Contains(f.progress[2].Message, "'c'") {
		t.Fatalf("message: %q", f.progress[2].Message)
	}
	// Without a token, no notifications.
	f.progress = nil
	f.progMu.Unlock()
	f.call("workflow_execute", map[string]any{"workflow": md}).mustOK(t)
	time.Sleep(50 * time.Millisecond)
	f.progMu.Lock()
	if len(f.progress) != 0 {
		t.Fatalf("notifications without a token: %d", len(f.progress))
	}
}

// sleeper is a workflow whose shell step records its pid and sleeps.
func sleeper(t *testing.T) (md, pidFile string) {
	pidFile = filepath.Join(t.TempDir(), "pid")
	md = "# Sleeper\nSleeps.\n\n## Steps\n\n### nap\nSleep a long time.\n- type: shell\n- timeout: 120\n- command: echo $$ > " + pidFile + "; sleep 60\n"
	return md, pidFile
}

func waitPid(t *testing.T, pidFile string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the step never started")
	return 0
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d still running after the run was cancelled", pid)
}

func TestCancelledRequestStopsTheRunAndKillsItsProcesses(t *testing.T) {
	f := newFixture(t, nil)
	md, pidFile := sleeper(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md}})
		done <- err
	}()
	pid := waitPid(t, pidFile)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cancelled call returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	waitGone(t, pid)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(f.log.String(), "workflow_execute -> execution") {
		if time.Now().After(deadline) {
			t.Fatalf("server handler did not finish: %s", f.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShutdownCancelsRunningCalls(t *testing.T) {
	f := newFixture(t, nil)
	md, pidFile := sleeper(t)
	res := make(chan *result, 1)
	go func() {
		r, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md}})
		if err != nil {
			res <- nil
			return
		}
		res <- decodeResult(t, "workflow_execute", r)
	}()
	pid := waitPid(t, pidFile)
	stopped := make(chan struct{})
	go func() { f.srv.Shutdown(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	waitGone(t, pid)
	select {
	case r := <-res:
		if r != nil && !r.IsError {
			t.Fatalf("interrupted run reported success: %s", r.Text)
		}
		if r != nil {
			contains(t, r.errMsg(), "interrupted")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call did not return after shutdown")
	}
}

func newHTTP(t *testing.T, token string) (*Server, *httptest.Server, *fixture) {
	t.Helper()
	f := newFixture(t, nil, httpMode())
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{Token: token}))
	t.Cleanup(ts.Close)
	return f.srv, ts, f
}

type headerRT struct {
	h  http.Header
	rt http.RoundTripper
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return h.rt.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: headerRT{http.Header{"Authorization": {"Bearer " + token}}, http.DefaultTransport}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTP50ConcurrentExecutionsAreIsolated(t *testing.T) {
	_, ts, f := newHTTP(t, "")
	cs := connectHTTP(t, ts.URL+"/mcp", "")
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	traces := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			want := fmt.Sprintf("call-%d", i)
			md := strings.Replace(echoMD, "- type: echo\n- message: ${msg}", "- type: shell\n- command: sleep 0.1; echo ${msg}", 1)
			md = strings.Replace(md, "${say.echo}", "${say.stdout}", 1)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md, "parameters": map[string]any{"msg": want}}})
			if err != nil {
				errs <- err
				return
			}
			res := decodeResult(t, "workflow_execute", r)
			if res.IsError {
				errs <- fmt.Errorf("%d: %s", i, res.Text)
				return
			}
			got := strings.TrimSpace(fmt.Sprint(res.data()["outputs"].(map[string]any)["out"]))
			if got != want {
				errs <- fmt.Errorf("call %d got %q", i, got)
			}
			traces <- res.Env["trace_path"].(string)
		}(i)
	}
	wg.Wait()
	close(errs)
	close(traces)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for tp := range traces {
		seen[tp] = true
	}
	if len(seen) != n {
		t.Fatalf("want %d distinct traces, got %d", n, len(seen))
	}
	_ = f
}

func TestHTTPBearerTokenAndDNSRebindingProtection(t *testing.T) {
	_, ts, _ := newHTTP(t, "s3cret-token")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(hdr map[string]string) int {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(nil); c != http.StatusUnauthorized {
		t.Fatalf("no token: %d", c)
	}
	if c := post(map[string]string{"Authorization": "Bearer wrong"}); c != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", c)
	}
	if c := post(map[string]string{"Authorization": "Bearer s3cret-token"}); c != http.StatusOK {
		t.Fatalf("right token: %d", c)
	}
	if c := post(map[string]string{"Authorization": "Bearer s3cret-token", "Host": "evil.example.com"}); c != http.StatusForbidden {
		t.Fatalf("rebinding Host header: %d", c)
	}
	cs := connectHTTP(t, ts.URL+"/mcp", "s3cret-token")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 16 {
		t.Fatalf("tools over HTTP: %v %v", err, res)
	}
}

func TestHTTPSecurityRules(t *testing.T) {
	for _, c := range []struct {
		in, addr string
		loop     bool
	}{
		{"8765", "127.0.0.1:8765", true},
		{":8765", "127.0.0.1:8765", true},
		{"localhost:1", "localhost:1", true},
		{"[::1]:9", "[::1]:9", true},
		{"0.0.0.0:8765", "0.0.0.0:8765", false},
		{"192.168.1.5:80", "192.168.1.5:80", false},
	} {
		a := ListenAddr(c.in)
		if a != c.addr || IsLoopback(a) != c.loop {
			t.Errorf("%s -> %s loopback=%v", c.in, a, IsLoopback(a))
		}
		err := CheckNoAuth(a)
		if (err == nil) != c.loop {
			t.Errorf("%s with --no-auth: %v", a, err)
		}
		var pe *pferr.Error
		if err != nil && (!errors.As(err, &pe) || pe.ExitCode() != pferr.ExitUsage || !strings.Contains(err.Error(), "anyone who can reach that address")) {
			t.Errorf("%s with --no-auth: %v", a, err)
		}
	}
}

func TestHTTPCancelledRequestKillsTheRun(t *testing.T) {
	_, ts, f := newHTTP(t, "")
	cs := connectHTTP(t, ts.URL+"/mcp", "")
	md, pidFile := sleeper(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md}})
		done <- err
	}()
	pid := waitPid(t, pidFile)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	waitGone(t, pid)
	_ = f
}

func TestHTTPSurvivesMalformedRequests(t *testing.T) {
	_, ts, _ := newHTTP(t, "")
	for _, body := range []string{"not json", `{"foo":1}`, `[1,2`, strings.Repeat("{", 1<<16)} {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("body %.20q: status %d, want 4xx", body, resp.StatusCode)
		}
	}
	resp, err := http.Get(ts.URL + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("other path: %d", resp.StatusCode)
	}
	cs := connectHTTP(t, ts.URL+"/mcp", "")
	if res, err := cs.ListTools(context.Background(), nil); err != nil || len(res.Tools) != 16 {
		t.Fatalf("server unusable after malformed requests: %v", err)
	}
}
