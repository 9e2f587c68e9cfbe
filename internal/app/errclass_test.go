package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A failing http step's failure carries its class: an edge routes on it
// (falling back to the error edge), ${step.error_class} holds it, a retry
// of a rate-limited call waits at least what Retry-After says, and an edge
// on an action the step never takes is refused before running (issue #12
// item 7).
func TestErrorClassesRouteFailures(t *testing.T) {
	var mu sync.Mutex
	var limitedAt []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/limited":
			mu.Lock()
			limitedAt = append(limitedAt, time.Now())
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	run := func(src string) *RunOutcome {
		t.Helper()
		wf := filepath.Join(t.TempDir(), "w.pflow.md")
		os.WriteFile(wf, []byte(src), 0o644)
		target, err := a.ResolveTarget(wf)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(context.Background(), RunRequest{Target: target, Params: map[string]any{"api": srv.URL}, NoTrace: true, NoRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	wf := func(path, extra string) string {
		return "# Classes\nRoutes failures by class.\n\n## Inputs\n\n### api\nThe API.\n- type: string\n\n## Steps\n\n" +
			"### fetch\nCall the API.\n- type: http\n- url: ${api}" + path + "\n" + extra + "\n```yaml on\nrate_limited: wait\nerror: report\n```\n\n" +
			"### wait\nBack off.\n- type: shell\n- command: echo \"waited ${fetch.error_class}\"\n\n" +
			"### report\nReport.\n- type: shell\n- command: echo \"reported ${fetch.error_class}\"\n\n" +
			"## Outputs\n\n### waited\nIf it waited.\n- source: ${wait.stdout}\n\n### reported\nIf it reported.\n- source: ${report.stdout}\n"
	}
	said := func(out *RunOutcome) string {
		t.Helper()
		if len(out.ValidationErrors) > 0 || out.Result == nil || !out.Result.Success() {
			t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
		}
		var said []string
		for _, k := range []string{"waited", "reported"} {
			if s, ok := out.Result.Outputs[k].(string); ok {
				said = append(said, strings.TrimSpace(s))
			}
		}
		return strings.Join(said, "+")
	}
	// 429 with Retry-After: the retry waits at least a second, then the
	// rate_limited edge is taken.
	if got := said(run(wf("/limited", "- retries: 1\n- retry_wait: 0"))); got != "waited rate_limited" {
		t.Fatalf("a 429 went to %q", got)
	}
	mu.Lock()
	if len(limitedAt) != 2 || limitedAt[1].Sub(limitedAt[0]) < time.Second {
		t.Fatalf("the retry did not honour Retry-After: requests at %v", limitedAt)
	}
	mu.Unlock()
	// A class without its own edge falls back to the error edge.
	if got := said(run(wf("/missing", ""))); got != "reported not_found" {
		t.Fatalf("a 404 went to %q", got)
	}
	// An action no step of that type takes is refused before running.
	bad := "# Bad\nNever fires.\n\n## Steps\n\n### s\nShell.\n- type: shell\n- command: exit 1\n\n```yaml on\nrate_limited: t\n```\n\n### t\nT.\n- type: shell\n- command: echo t\n"
	out := run(bad)
	if len(out.ValidationErrors) == 0 || !strings.Contains(out.ValidationErrors[0].Message, "Step 's' has an edge on action 'rate_limited', which a shell step never takes") {
		t.Fatalf("validation: %+v", out.ValidationErrors)
	}
	typo := strings.Replace(wf("/missing", ""), "rate_limited: wait", "rate_limted: wait", 1)
	out = run(typo)
	if len(out.ValidationErrors) == 0 || !strings.Contains(out.ValidationErrors[0].Message, "did you mean 'rate_limited'?") {
		t.Fatalf("typo: %+v", out.ValidationErrors)
	}
}
