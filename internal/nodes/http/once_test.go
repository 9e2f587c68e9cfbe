package http

import (
	"context"
	nethttp "net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// specCatalog is a catalog of the given node types.
type specCatalog []*node.Spec

func (c specCatalog) Lookup(t string) (*node.Spec, bool) {
	for _, s := range c {
		if s.Type == t {
			return s, true
		}
	}
	return nil, false
}

func (c specCatalog) Types() []string { return nil }

// TestWrongParamsFailOnce: an http step whose params are wrong when the
// step runs (headers made a string or a list by a template, a timeout that
// is a word) fails at its first attempt, with the fix in the message,
// instead of being tried http's 3 times, or retries+1 times when the step
// sets retries. Nothing is sent.
func TestWrongParamsFailOnce(t *testing.T) {
	var hits atomic.Int64
	srv := newServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { hits.Add(1) })
	cases := []struct {
		name, param, input, want string
	}{
		{"headers a string", "headers", `"Authorization"`, "write it as '- headers: {name: value}'"},
		{"headers a list", "headers", `["a", "b"]`, "expects a mapping of names to values, got list"},
		{"timeout a word", "timeout", `"soon"`, `expects seconds (e.g. 30) or a duration (e.g. 1m30s), got "soon"`},
		{"timeout zero", "timeout", `0`, "must be greater than 0 seconds"},
	}
	for _, c := range cases {
		for _, retries := range []string{"", "- retries: 3\n"} {
			t.Run(c.name+"/"+strings.TrimSpace(retries), func(t *testing.T) {
				src := "# W\nW.\n\n## Inputs\n\n### v\nThe value.\n- type: any\n\n## Steps\n\n### call\nCalls.\n- type: http\n- url: " + srv.URL +
					"\n- " + c.param + ": ${v}\n" + retries
				w, err := workflow.ParseMarkdown([]byte(src), "w.pflow.md")
				if err != nil {
					t.Fatal(err)
				}
				v, err := value.DecodeJSON([]byte(c.input))
				if err != nil {
					t.Fatal(err)
				}
				res := runtime.Run(context.Background(), w, map[string]any{"v": v}, runtime.Options{Catalog: specCatalog{Spec()}})
				if res.Success() || len(res.Steps) != 1 {
					t.Fatalf("status %s, steps %d: want a failed run", res.Status, len(res.Steps))
				}
				if s := res.Steps[0]; s.Attempts != 1 || !strings.Contains(s.Error, c.want) {
					t.Errorf("attempts %d, error %q: want 1 attempt and %q", s.Attempts, s.Error, c.want)
				}
			})
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent for params the node cannot use", n)
	}
}
