package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

func schemaEntry(server, tool string) *Entry {
	e := mcpEntry(server, tool)
	e.MCP.InputSchema = map[string]any{"type": "object", "properties": map[string]any{
		"q": map[string]any{"type": "string", "description": "what <to> find & \"why\""}}, "required": []any{"q"}}
	e.MCP.OutputSchema = map[string]any{"type": "object"}
	return e
}

// A registry written by another program: indented, other key order, a field
// this pflow does not know, escapes in strings.
const foreignRegistry = `{
  "nodes": {
    "mcp-other-t": {
      "mcp": {"tool": "t", "server": "other", "input_schema": {"type": "object", "properties": {"a b": {"type": "string", "enum": ["x \" y", "\u00e9"]}}}},
      "type": "mcp",
      "class_name": "MCPNode",
      "x_future_field": [1, 2.50, {"k": null}],
      "interface": {"description": "kept as it was"}
    },
    "shell": {"class_name": "ShellNode", "type": "core", "interface": {"description": "core"}}
  },
  "version": "0.0.1"
}
`

func TestPatchKeepsUntouchedEntriesByteForByte(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	os.WriteFile(path, []byte(foreignRegistry), 0o644)
	s := Open(path, nil)
	s.CachePath = filepath.Join(dir, "cache", "registry.cache")
	err := s.Patch(context.Background(), func(f *File) error {
		if len(f.Nodes) != 2 || f.Nodes["mcp-other-t"].MCP.Server != "other" {
			t.Fatalf("fn saw %v", f.Nodes)
		}
		if f.Nodes["mcp-other-t"].MCP.InputSchema != nil {
			t.Fatal("Patch should hand fn entries without schemas")
		}
		f.Nodes["mcp-a-x"] = schemaEntry("a", "x")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var raw struct {
		Nodes map[string]json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("written registry is not JSON: %v\n%s", err, data)
	}
	want := `{"mcp":{"tool":"t","server":"other","input_schema":{"type":"object","properties":{"a b":{"type":"string","enum":["x \" y","\u00e9"]}}}},"type":"mcp","class_name":"MCPNode","x_future_field":[1,2.50,{"k":null}],"interface":{"description":"kept as it was"}}`
	if got := string(raw.Nodes["mcp-other-t"]); got != want {
		t.Fatalf("untouched entry changed:\n got %s\nwant %s", got, want)
	}
	// Every reader sees the new entry with its schemas, and the old one's.
	f, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if q := f.Nodes["mcp-a-x"].MCP.InputSchema["properties"].(map[string]any)["q"].(map[string]any); q["description"] != `what <to> find & "why"` {
		t.Fatalf("new entry's schema = %v", q)
	}
	if f.Nodes["mcp-other-t"].MCP.InputSchema == nil {
		t.Fatal("the untouched entry lost its schema")
	}
	// The backup is the previous file, exactly.
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != foreignRegistry {
		t.Fatalf(".bak is not the previous version:\n%s", bak)
	}
	// The cache was refreshed: LoadWithoutSchemas answers from it.
	lite, err := s.LoadWithoutSchemas()
	if err != nil || len(lite.Nodes) != 3 || lite.Nodes["mcp-a-x"].MCP.Tool != "x" || lite.Nodes["mcp-a-x"].MCP.InputSchema != nil {
		t.Fatalf("LoadWithoutSchemas after Patch: %v %v", err, lite.Nodes)
	}
	st, _ := os.Stat(path)
	if _, ok := s.cached(st.Size(), stamp(st), inode(st)); !ok {
		t.Fatal("Patch did not refresh the registry cache")
	}
}

func TestPatchReplaceDeleteAndSameAsStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	s := Open(path, nil)
	ctx := context.Background()
	if err := s.Update(ctx, func(f *File) error {
		f.Nodes["mcp-a-x"] = schemaEntry("a", "x")
		f.Nodes["mcp-a-y"] = schemaEntry("a", "y")
		f.Nodes["mcp-b-z"] = schemaEntry("b", "z")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err := s.Patch(ctx, func(f *File) error {
		if !f.SameAsStored("mcp-a-x", schemaEntry("a", "x")) {
			t.Error("an identical entry is reported as changed")
		}
		changed := schemaEntry("a", "y")
		changed.Interface.Description = "new text"
		if f.SameAsStored("mcp-a-y", changed) {
			t.Error("a changed description is reported as the same")
		}
		if f.SameAsStored("mcp-a-new", schemaEntry("a", "new")) {
			t.Error("an entry that did not exist is reported as the same")
		}
		f.Nodes["mcp-a-y"] = changed
		delete(f.Nodes, "mcp-b-z")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 2 || f.Nodes["mcp-a-y"].Interface.Description != "new text" || f.Nodes["mcp-a-y"].MCP.InputSchema == nil || f.Nodes["mcp-a-x"].MCP.InputSchema == nil {
		t.Fatalf("after Patch: %v", f.Nodes)
	}
	// An aborted Patch writes nothing.
	before, _ := os.ReadFile(path)
	if err := s.Patch(ctx, func(f *File) error { delete(f.Nodes, "mcp-a-x"); return fmt.Errorf("nope") }); err == nil || err.Error() != "nope" {
		t.Fatalf("want fn error, got %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("aborted Patch changed the file")
	}
}

func TestPatchRestoresCorruptFileFromBackup(t *testing.T) {
	var log strings.Builder
	path := filepath.Join(t.TempDir(), "registry.json")
	s := Open(path, &log)
	ctx := context.Background()
	s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-x"] = schemaEntry("a", "x"); return nil })
	s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-y"] = schemaEntry("a", "y"); return nil }) // .bak has x
	good, _ := os.ReadFile(path)
	os.WriteFile(path, good[:len(good)/2], 0o644)
	if err := s.Patch(ctx, func(f *File) error {
		if f.Nodes["mcp-a-x"] == nil {
			t.Error("fn did not see the restored entries")
		}
		f.Nodes["mcp-a-z"] = schemaEntry("a", "z")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "restored the previous version") {
		t.Fatalf("no restore warning: %q", log.String())
	}
	f, err := s.Load()
	if err != nil || f.Nodes["mcp-a-x"].MCP.InputSchema == nil || f.Nodes["mcp-a-z"] == nil {
		t.Fatalf("after Patch of a corrupt file: %v %v", err, f)
	}
}

func TestSplitNodes(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
		ok   bool
	}{
		{`{"version":"1","nodes":{"a":{"x":"}"},"b":[1,{"y":"\\\""}],"c":null,"d":-1.5e3}}`, map[string]string{"a": `{"x":"}"}`, "b": `[1,{"y":"\\\""}]`, "c": "null", "d": "-1.5e3"}, true},
		{` { "nodes" : { "k\u0041" : true } , "version" : "1" } `, map[string]string{"kA": "true"}, true},
		// A repeated "nodes" merges, as it does when the entries are decoded.
		{`{"nodes":{"a":1},"nodes":{"b":2}}`, map[string]string{"a": "1", "b": "2"}, true},
		{`{"version":"1"}`, map[string]string{}, true},
		{`{"nodes":{"a":{"x":1}`, nil, false},
		{`[]`, nil, false},
	}
	for _, tt := range tests {
		got, ok := splitNodes([]byte(tt.in))
		if ok != tt.ok {
			t.Errorf("%s: ok = %v", tt.in, ok)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %d members, want %d", tt.in, len(got), len(tt.want))
		}
		for k, v := range tt.want {
			if string(got[k]) != v {
				t.Errorf("%s: [%s] = %s, want %s", tt.in, k, got[k], v)
			}
		}
	}
}

func TestCompactEqual(t *testing.T) {
	for _, tt := range []struct {
		raw, b string
		want   bool
	}{
		{`{"a": [1, 2], "s": "x y"}`, `{"a":[1,2],"s":"x y"}`, true},
		{`{"s": "x y"}`, `{"s":"xy"}`, false},
		{`{"s":"a\" b"}`, `{"s":"a\" b"}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
	} {
		if got := compactEqual([]byte(tt.raw), []byte(tt.b)); got != tt.want {
			t.Errorf("compactEqual(%s, %s) = %v", tt.raw, tt.b, got)
		}
		if tt.want && string(appendCompact(nil, []byte(tt.raw))) != tt.b {
			t.Errorf("appendCompact(%s) = %s", tt.raw, appendCompact(nil, []byte(tt.raw)))
		}
	}
}

// bigRegistry writes a registry of n MCP tools with schemas (like a
// synced 1,000-tool server) and returns its store.
func bigRegistry(tb testing.TB, n int) *Store {
	dir := tb.TempDir()
	s := Open(filepath.Join(dir, "registry.json"), nil)
	s.CachePath = filepath.Join(dir, "cache", "registry.cache")
	s.Update(context.Background(), func(f *File) error {
		for i := 0; i < n; i++ {
			f.Nodes[fmt.Sprintf("mcp-big-t%04d", i)] = bigEntry(i)
		}
		return nil
	})
	s.LoadWithoutSchemas() // as any command before the sync would
	return s
}

func bigEntry(i int) *Entry {
	e := schemaEntry("big", fmt.Sprintf("t%04d", i))
	e.Interface.Params = []node.Field{{Key: "q", Type: "str", Required: true, Description: "what to find"}}
	return e
}

// resync is what `pflow mcp sync` of an unchanged 1,000-tool server does.
func resync(tb testing.TB, s *Store, n int, patch bool) {
	fn := func(f *File) error {
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("mcp-big-t%04d", i)
			e := bigEntry(i)
			if patch && !f.SameAsStored(k, e) {
				tb.Fatalf("%s reported as changed", k)
			}
			f.Nodes[k] = e
		}
		return nil
	}
	var err error
	if patch {
		err = s.Patch(context.Background(), fn)
	} else {
		err = s.Update(context.Background(), fn)
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// Changing one entry of a 1,000-tool registry must not decode and
// re-encode the whole registry (schemas included): Patch makes a fraction of
// Update's allocations, which does.
func TestPatchCheaperThanUpdateAt1000Tools(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations of a 1,000-tool registry")
	}
	s := bigRegistry(t, 1000)
	ctx := context.Background()
	measure := func(patch bool) uint64 {
		fn := func(f *File) error { f.Nodes["mcp-big-t0001"] = bigEntry(1); return nil }
		var before, after runtimeMem
		before.read()
		var err error
		if patch {
			err = s.Patch(ctx, fn)
		} else {
			err = s.Update(ctx, fn)
		}
		after.read()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("patch=%v: %d bytes, %d allocations", patch, after.bytes-before.bytes, after.mallocs-before.mallocs)
		return after.mallocs - before.mallocs
	}
	measure(true) // converts the file to the compact form and fills the cache
	p, u := measure(true), measure(false)
	if p*5 > u {
		t.Fatalf("Patch made %d allocations, Update %d: Patch should make less than a fifth as many", p, u)
	}
}

func BenchmarkResync1000(b *testing.B) {
	for _, mode := range []struct {
		name  string
		patch bool
	}{{"update", false}, {"patch", true}} {
		b.Run(mode.name, func(b *testing.B) {
			s := bigRegistry(b, 1000)
			resync(b, s, 1000, mode.patch)
			for b.Loop() {
				resync(b, s, 1000, mode.patch)
			}
		})
	}
}

type runtimeMem struct{ bytes, mallocs uint64 }

func (m *runtimeMem) read() {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	m.bytes = ms.TotalAlloc
	m.mallocs = ms.Mallocs
}
