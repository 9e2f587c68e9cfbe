package runtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

// urlCatalog has a node whose 'url' param is a URL sink and that echoes the
// URL it received, and a node whose error result is Permanent.
func urlCatalog(calls *atomic.Int64) fakeCatalog {
	c := testCatalog(nil)
	c["fetch"] = &node.Spec{Type: "fetch", Attempts: 1, Interface: node.Interface{
		Params:  []node.Field{{Key: "url", Type: "str", Sink: node.SinkURL}, {Key: "note", Type: "str"}},
		Outputs: []node.Field{{Key: "url", Type: "str"}, {Key: "note", Type: "str"}}},
		Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			return node.Ok(map[string]any{"url": r.Params["url"], "note": r.Params["note"]}), nil
		})}
	c["refuse"] = &node.Spec{Type: "refuse", Attempts: 3, Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
		calls.Add(1)
		res := node.Fail("header 'X-A' contains a line break", nil)
		res.Permanent = true
		return res, nil
	})}
	return c
}

// TestURLSinkParams: a URL-sink param gets each value encoded for its part
// of the URL; other params of the same step stay plain data.
func TestURLSinkParams(t *testing.T) {
	w := chain(step("f", "fetch", map[string]any{
		"url":  "https://api.example.com/items/${id}?q=${q}",
		"note": "id=${id}",
	}))
	res := Run(context.Background(), w, map[string]any{"id": "../admin", "q": "a&admin=1"}, Options{Catalog: urlCatalog(nil)})
	if !res.Success() {
		t.Fatalf("failure %+v", res.Failure)
	}
	ns := res.Shared["f"].(map[string]any)
	if ns["url"] != "https://api.example.com/items/..%2Fadmin?q=a%26admin%3D1" {
		t.Errorf("url = %q", ns["url"])
	}
	if ns["note"] != "id=../admin" {
		t.Errorf("note = %q", ns["note"])
	}

	// A value that cannot be a host fails the step before it runs, naming
	// the param and the template.
	w = chain(step("f", "fetch", map[string]any{"url": "https://${host}/x"}))
	res = Run(context.Background(), w, map[string]any{"host": "evil.com/"}, Options{Catalog: urlCatalog(nil)})
	if res.Success() || res.Failure.Category != CategoryTemplate ||
		!strings.Contains(res.Failure.Message, "Parameter 'url'") || !strings.Contains(res.Failure.Message, "${host}") {
		t.Fatalf("failure = %+v", res.Failure)
	}

	// An unresolved template is reported as such, not as a bad URL.
	w = chain(step("f", "fetch", map[string]any{"url": "${base}/x"}))
	res = Run(context.Background(), w, nil, Options{Catalog: urlCatalog(nil)})
	if res.Success() || res.Failure.Category != CategoryTemplate || !strings.Contains(res.Failure.Message, "${base}") ||
		strings.Contains(res.Failure.Message, "http://") {
		t.Fatalf("failure = %+v", res.Failure)
	}
}

// TestPermanentFailureNotRetried: a Permanent error result runs once even
// when the step asks for retries.
func TestPermanentFailureNotRetried(t *testing.T) {
	var calls atomic.Int64
	w := chain(step("r", "refuse", map[string]any{"retries": int64(3), "retry_wait": "1ms"}))
	res := Run(context.Background(), w, nil, Options{Catalog: urlCatalog(&calls)})
	if res.Success() || calls.Load() != 1 {
		t.Fatalf("success=%v calls=%d, want one call", res.Success(), calls.Load())
	}
	if !strings.Contains(res.Failure.Message, "line break") {
		t.Errorf("failure = %+v", res.Failure)
	}
}
