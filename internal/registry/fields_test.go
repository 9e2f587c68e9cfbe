package registry

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

// Every field of an MCP entry but its schemas survives every lean path:
// LoadWithoutSchemas from JSON and from the binary cache, and Patch's
// read-modify-write. (Three hand-written copies once dropped a param's sink
// and the tool's schema hash, which made every run rewrite registry.json and
// hid drift.) A new field must be set here, or the test says so.
func TestLeanPathsKeepEveryField(t *testing.T) {
	e := mcpEntry("srv", "tool")
	e.Group = "mcp-srv"
	no, yes := false, true
	e.MCP.Hints = &MCPHints{ReadOnly: true, Idempotent: true, Destructive: &no, OpenWorld: &yes}
	e.MCP.SchemaHash = "abc123"
	e.MCP.Protocol = "2026-07-28"
	e.MCP.InputSchema = map[string]any{"type": "object"}
	e.MCP.OutputSchema = map[string]any{"type": "object"}
	e.Interface = node.Interface{Description: "d", ExtraParams: true, Actions: []string{"default", "error"},
		Params:  []node.Field{{Key: "cmd", Type: "str", Description: "c", Required: true, Default: "x", Enum: []any{"x", "y"}, Sink: node.SinkShell}},
		Outputs: []node.Field{{Key: "out", Type: "dict", Structure: []node.Field{{Key: "id", Type: "int"}}}}}
	for _, v := range []any{*e, *e.MCP, e.Interface, e.Interface.Params[0]} {
		rv := reflect.ValueOf(v)
		for i := 0; i < rv.NumField(); i++ {
			// Also (other tools' names of a param) is not stored: only
			// built-in nodes, whose specs come from code, set it.
			if name := rv.Type().Field(i).Name; rv.Type().Field(i).IsExported() && rv.Field(i).IsZero() && name != "Structure" && name != "Also" {
				t.Errorf("%s.%s is not set in this test: set it, so the lean paths are checked for it", rv.Type().Name(), rv.Type().Field(i).Name)
			}
		}
	}
	want := *e
	m := *e.MCP
	m.InputSchema, m.OutputSchema = nil, nil
	want.MCP = &m
	wantJSON, _ := json.Marshal(&want)
	check := func(path string, f *File) {
		t.Helper()
		got, _ := json.Marshal(f.Nodes["mcp-srv-tool"])
		if string(got) != string(wantJSON) {
			t.Errorf("%s lost a field:\n got %s\nwant %s", path, got, wantJSON)
		}
	}
	dir := t.TempDir()
	s := Open(filepath.Join(dir, "registry.json"), nil)
	s.CachePath = filepath.Join(dir, "cache", "registry.cache")
	ctx := context.Background()
	if err := s.Update(ctx, func(f *File) error { f.Nodes["mcp-srv-tool"] = e; return nil }); err != nil {
		t.Fatal(err)
	}
	s.CachePath = "" // JSON only
	f, _ := s.LoadWithoutSchemas()
	check("LoadWithoutSchemas (JSON)", f)
	s.CachePath = filepath.Join(dir, "cache", "registry.cache")
	s.LoadWithoutSchemas()        // writes the cache
	f, _ = s.LoadWithoutSchemas() // reads it
	check("LoadWithoutSchemas (cache)", f)
	// Patch sees the entry lean and writes it back untouched.
	if err := s.Patch(ctx, func(f *File) error {
		check("Patch", f)
		f.Nodes["other"] = mcpEntry("srv", "other")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	full, _ := s.Load()
	if got, _ := json.Marshal(full.Nodes["mcp-srv-tool"]); string(got) != string(func() []byte { b, _ := json.Marshal(e); return b }()) {
		t.Errorf("Patch rewrote an entry it did not touch:\n%s", got)
	}
	f, _ = s.LoadWithoutSchemas() // the cache Patch refreshed
	check("the cache after Patch", f)
}
