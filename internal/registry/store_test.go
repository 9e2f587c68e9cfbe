package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

func mcpEntry(server, tool string) *Entry {
	return &Entry{ClassName: "MCPNode", FilePath: "virtual://mcp", Type: TypeMCP, Kind: "mcp",
		Interface: node.Interface{Description: tool + " on " + server},
		MCP:       &MCPInfo{Server: server, Tool: tool}}
}

func TestStoreLoadMissingIsEmpty(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "registry.json"), nil)
	f, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 0 || f.Nodes == nil {
		t.Fatalf("want empty non-nil node map, got %#v", f.Nodes)
	}
}

func TestStoreUpdateRoundTripAndBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	s := Open(path, nil)
	ctx := context.Background()
	if err := s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-x"] = mcpEntry("a", "x"); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-y"] = mcpEntry("a", "y"); return nil }); err != nil {
		t.Fatal(err)
	}
	f, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 2 || f.Nodes["mcp-a-y"].MCP.Tool != "y" {
		t.Fatalf("nodes = %v", f.Nodes)
	}
	bak, err := os.ReadFile(path + ".bak")
	if err != nil {
		t.Fatalf("no .bak written: %v", err)
	}
	var bf File
	if err := json.Unmarshal(bak, &bf); err != nil || len(bf.Nodes) != 1 {
		t.Fatalf(".bak should hold the previous version with 1 node: %v %v", err, bf.Nodes)
	}
	// fn error aborts without writing.
	before, _ := os.ReadFile(path)
	err = s.Update(ctx, func(f *File) error { f.Nodes = nil; return fmt.Errorf("nope") })
	if err == nil || err.Error() != "nope" {
		t.Fatalf("want fn error, got %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("aborted update changed the file")
	}
}

func TestStoreRestoresTruncatedFileFromBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	var log bytes.Buffer
	s := Open(path, &log)
	ctx := context.Background()
	for _, tool := range []string{"x", "y"} {
		if err := s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-"+tool] = mcpEntry("a", tool); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	// Simulate a write cut off half-way.
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := s.Load()
	if err != nil {
		t.Fatalf("Load should restore from .bak: %v", err)
	}
	if _, ok := f.Nodes["mcp-a-x"]; !ok {
		t.Fatalf("restored registry lacks the backed-up entry: %v", f.Nodes)
	}
	if !strings.Contains(log.String(), "Warning") || !strings.Contains(log.String(), ".bak") {
		t.Fatalf("want a warning naming the backup, got %q", log.String())
	}
	// The main file is valid again.
	data, _ = os.ReadFile(path)
	if _, err := decode(data); err != nil {
		t.Fatalf("main file not rewritten: %v", err)
	}
}

func TestStoreCorruptWithoutBackupSaysHowToRecover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	os.WriteFile(path, []byte(`{"nodes": {`), 0o644)
	_, err := Open(path, nil).Load()
	pe := pferr.As(err)
	if err == nil || pe.Kind != pferr.Config || !strings.Contains(pe.Advice(pferr.Person), "Delete "+path+" and run 'pflow registry list'") {
		t.Fatalf("want config error with recovery hint, got %v (%+v)", err, pe)
	}
}

func TestStoreConcurrentUpdatesLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := Open(path, nil) // separate stores, as separate processes would have
			errs <- s.Update(ctx, func(f *File) error {
				f.Nodes[fmt.Sprintf("mcp-s-t%d", i)] = mcpEntry("s", fmt.Sprint("t", i))
				return nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := Open(path, nil).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 20 {
		t.Fatalf("lost writes: %d of 20 entries", len(f.Nodes))
	}
}

// An edit of registry.json in place, to the same size, with its mtime put
// back (as 'cp -p', rsync or touch -d leave it) is read: the cached and
// remembered versions are told apart by the ctime, which no tool sets back.
func TestLoadSeesAnEditWithTheOldMtime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.json")
	s := Open(path, nil)
	if err := s.Update(context.Background(), func(f *File) error { f.Nodes["mcp-a-x"] = mcpEntry("a", "x"); return nil }); err != nil {
		t.Fatal(err)
	}
	if f, err := s.LoadWithoutSchemas(); err != nil || f.Nodes["mcp-a-x"] == nil {
		t.Fatalf("first load: %v %v", f, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"mcp-a-x"`), []byte(`"mcp-a-z"`), 1)
	if len(edited) != len(data) || bytes.Equal(edited, data) {
		t.Fatal("the edit must keep the size")
	}
	// Written until the ctime shows it (the file system's clock is coarse).
	ctime := func() time.Time { st, _ := os.Stat(path); return time.Unix(0, stamp(st)) }
	before := ctime()
	for deadline := time.Now().Add(10 * time.Second); ctime().Equal(before); {
		if time.Now().After(deadline) {
			t.Fatal("the ctime does not change")
		}
		time.Sleep(time.Millisecond)
		if err := os.WriteFile(path, edited, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	for _, load := range []func() (*File, error){s.LoadWithoutSchemas, Open(path, nil).LoadWithoutSchemas} {
		got, err := load()
		if err != nil || got.Nodes["mcp-a-z"] == nil || got.Nodes["mcp-a-x"] != nil {
			t.Fatalf("after the edit: %v %v", got.Nodes, err)
		}
	}
}
