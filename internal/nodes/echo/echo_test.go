package echo

import (
	"context"
	"reflect"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

func TestEcho(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   map[string]any
	}{
		{"default message", map[string]any{},
			map[string]any{"echo": "Hello, World!", "metadata": map[string]any{"original_message": "Hello, World!", "count": int64(1), "modified": false}}},
		{"message", map[string]any{"message": "hi"},
			map[string]any{"echo": "hi", "metadata": map[string]any{"original_message": "hi", "count": int64(1), "modified": false}}},
		{"prefix suffix", map[string]any{"message": "hi", "prefix": "<", "suffix": ">"},
			map[string]any{"echo": "<hi>", "metadata": map[string]any{"original_message": "hi", "count": int64(1), "modified": true}}},
		{"count", map[string]any{"message": "hi", "count": int64(3)},
			map[string]any{"echo": "hi hi hi", "metadata": map[string]any{"original_message": "hi", "count": int64(3), "modified": true}}},
		{"uppercase after repeat", map[string]any{"message": "hi", "count": int64(2), "uppercase": true, "prefix": "a-"},
			map[string]any{"echo": "A-HI A-HI", "metadata": map[string]any{"original_message": "hi", "count": int64(2), "modified": true}}},
		{"data passed through", map[string]any{"data": map[string]any{"k": []any{int64(1)}}},
			map[string]any{"echo": "Hello, World!", "data": map[string]any{"k": []any{int64(1)}}, "metadata": map[string]any{"original_message": "Hello, World!", "count": int64(1), "modified": false}}},
		{"number message stringified", map[string]any{"message": int64(42)},
			map[string]any{"echo": "42", "metadata": map[string]any{"original_message": "42", "count": int64(1), "modified": false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Spec().Node.Run(context.Background(), &node.Request{Params: tt.params})
			if err != nil {
				t.Fatal(err)
			}
			if res.Action != "" {
				t.Fatalf("action %q", res.Action)
			}
			if !reflect.DeepEqual(res.Outputs, tt.want) {
				t.Fatalf("outputs = %#v\nwant %#v", res.Outputs, tt.want)
			}
		})
	}
}

func TestEchoErrors(t *testing.T) {
	for _, p := range []map[string]any{
		{"count": "many"},
		{"uppercase": "perhaps"},
		{"count": int64(1 << 30)},
	} {
		if _, err := Spec().Node.Run(context.Background(), &node.Request{Params: p}); err == nil {
			t.Errorf("params %v: want an error", p)
		}
	}
}

func TestEchoSpec(t *testing.T) {
	s := Spec()
	if s.Type != "echo" || s.Group != "test" || !s.Hidden || s.Attempts != 1 {
		t.Fatalf("spec %+v", s)
	}
	md, ok := s.Interface.Output("metadata")
	if !ok || len(md.Structure) != 3 {
		t.Fatalf("metadata structure %+v", md)
	}
}

func TestEchoAllocations(t *testing.T) {
	req := &node.Request{Params: map[string]any{"message": "hi", "data": int64(1)}}
	ctx := context.Background()
	n := Spec().Node
	allocs := testing.AllocsPerRun(100, func() { n.Run(ctx, req) })
	// Result, outputs map, metadata map, and boxing of count/modified.
	if allocs > 8 {
		t.Fatalf("echo allocates %.0f times per run; it must stay cheap for engine benchmarks", allocs)
	}
}

func BenchmarkEcho(b *testing.B) {
	req := &node.Request{Params: map[string]any{"message": "hi", "data": int64(1)}}
	ctx := context.Background()
	n := Spec().Node
	b.ReportAllocs()
	for b.Loop() {
		n.Run(ctx, req)
	}
}
