// Package registry is pflow's node registry: the registry.json store (MCP and
// user entries, plus a snapshot of the core nodes), the Catalog the runtime
// looks node types up in, and keyword search over node metadata.
//
// registry.json is written atomically under an exclusive lock, with a .bak of
// the previous version that Load restores (with a warning) when the main file
// is corrupt (DESIGN.md D4).
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

// FormatVersion is written to File.Version when a file is created.
const FormatVersion = "0.0.1"

// Entry types.
const (
	TypeCore = "core"
	TypeMCP  = "mcp"
	TypeUser = "user"
)

// MCPInfo describes an MCP tool registered as a node.
type MCPInfo struct {
	Server       string         `json:"server"`
	Tool         string         `json:"tool"` // original tool name, sent in tools/call
	InputSchema  map[string]any `json:"input_schema,omitempty"`
	OutputSchema map[string]any `json:"output_schema,omitempty"`
}

// Entry is one node type in registry.json.
type Entry struct {
	ClassName string         `json:"class_name"`          // "MCPNode" for MCP tools
	FilePath  string         `json:"file_path,omitempty"` // "virtual://mcp"
	Type      string         `json:"type"`                // "core" | "mcp" | "user"
	Kind      string         `json:"kind,omitempty"`      // "mcp" for MCP tools
	Group     string         `json:"group,omitempty"`
	Interface node.Interface `json:"interface"`
	MCP       *MCPInfo       `json:"mcp,omitempty"`
}

// File is the content of registry.json.
type File struct {
	Version string            `json:"version"`
	Nodes   map[string]*Entry `json:"nodes"` // key = node type, e.g. "mcp-github-create-issue"
}

// Store reads and writes registry.json.
type Store struct {
	Path string
	Log  io.Writer // warnings
	// CachePath optionally names a binary snapshot used by
	// LoadWithoutSchemas (e.g. $PFLOW_HOME/cache/registry.cache).
	CachePath string
}

// Open returns a store for path. log receives warnings (nil discards them).
func Open(path string, log io.Writer) *Store {
	if log == nil {
		log = io.Discard
	}
	return &Store{Path: path, Log: log}
}

// lockTimeout bounds how long Update waits for another writer.
const lockTimeout = 30 * time.Second

// Load reads registry.json; missing → empty File; corrupt → restores
// registry.json.bak with a warning on Log (and rewrites the main file), or an
// error saying how to recover if the backup is bad too.
func (s *Store) Load() (*File, error) {
	f, err := s.load()
	if err == nil || !errors.Is(err, errCorrupt) {
		return f, err
	}
	// Restore under the lock so two readers do not race on the rewrite.
	lk, lerr := fsutil.LockFile(context.Background(), s.Path, lockTimeout)
	if lerr != nil {
		return nil, pferr.Newf(pferr.Config, "%v", lerr).WithWhere(s.Path)
	}
	defer lk.Unlock()
	return s.loadOrRestore()
}

var errCorrupt = errors.New("corrupt registry")

type corruptError struct {
	path string
	err  error
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("%s is not valid registry JSON: %v", e.path, e.err)
}
func (e *corruptError) Is(t error) bool { return t == errCorrupt }

// load reads the main file without repairing it.
func (s *Store) load() (*File, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Version: FormatVersion, Nodes: map[string]*Entry{}}, nil
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "cannot read the node registry: %v", err).WithWhere(s.Path).
			WithHint("Check the file's permissions.")
	}
	f, err := decode(data)
	if err != nil {
		return nil, &corruptError{s.Path, err}
	}
	return f, nil
}

func decode(data []byte) (*File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the file is empty")
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Nodes == nil {
		f.Nodes = map[string]*Entry{}
	}
	for k, e := range f.Nodes {
		if e == nil {
			delete(f.Nodes, k)
		}
	}
	return &f, nil
}

// loadOrRestore must be called with the lock held.
func (s *Store) loadOrRestore() (*File, error) {
	f, err := s.load()
	if err == nil || !errors.Is(err, errCorrupt) {
		return f, err
	}
	bak := s.Path + ".bak"
	data, berr := os.ReadFile(bak)
	if berr == nil {
		if bf, derr := decode(data); derr == nil {
			if werr := fsutil.WriteFileAtomic(s.Path, data, 0o644); werr != nil {
				return nil, pferr.Newf(pferr.Config, "the node registry is corrupt (%v) and restoring it from %s failed: %v", err, bak, werr).WithWhere(s.Path)
			}
			fmt.Fprintf(s.Log, "Warning: %v; restored the previous version from %s (%d nodes)\n", err, bak, len(bf.Nodes))
			return bf, nil
		}
	}
	return nil, &pferr.Error{
		Kind:    pferr.Config,
		Message: fmt.Sprintf("the node registry is corrupt (%v) and there is no usable backup at %s", err, bak),
		Where:   s.Path,
		Hint: fmt.Sprintf("Delete %s and run 'pflow registry list' to rebuild the core nodes,\n"+
			"then 'pflow mcp sync' to re-register MCP tools.", s.Path),
		Err: err,
	}
}

// Update takes the exclusive lock, loads, calls fn, backs up the previous
// version to .bak and writes atomically. fn's error aborts without writing.
func (s *Store) Update(ctx context.Context, fn func(f *File) error) error {
	lk, err := fsutil.LockFile(ctx, s.Path, lockTimeout)
	if err != nil {
		return pferr.Newf(pferr.Config, "%v", err).WithWhere(s.Path)
	}
	defer lk.Unlock()
	f, err := s.loadOrRestore()
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	if f.Version == "" {
		f.Version = FormatVersion
	}
	if f.Nodes == nil {
		f.Nodes = map[string]*Entry{}
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return pferr.Newf(pferr.Internal, "encode the node registry: %v", err)
	}
	data = append(data, '\n')
	if err := fsutil.Backup(s.Path); err != nil {
		return pferr.Newf(pferr.Config, "back up the node registry: %v", err).WithWhere(s.Path)
	}
	if err := fsutil.WriteFileAtomic(s.Path, data, 0o644); err != nil {
		return pferr.Newf(pferr.Config, "save the node registry: %v", err).WithWhere(s.Path).
			WithHint("Check that the directory is writable and the disk is not full.")
	}
	return nil
}

// liteFile mirrors File but skips the MCP schemas, which the catalog does not
// need (the MCP node gets them from the live session). Skipping them avoids
// building thousands of maps on every command.
type liteFile struct {
	Version string                `json:"version"`
	Nodes   map[string]*liteEntry `json:"nodes"`
}

type liteEntry struct {
	ClassName string         `json:"class_name"`
	FilePath  string         `json:"file_path,omitempty"`
	Type      string         `json:"type"`
	Kind      string         `json:"kind,omitempty"`
	Group     string         `json:"group,omitempty"`
	Interface node.Interface `json:"interface"`
	MCP       *liteMCP       `json:"mcp,omitempty"`
}

type liteMCP struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// LoadWithoutSchemas is Load without the MCP input/output schemas
// (MCPInfo.InputSchema and OutputSchema are nil): the fast path for building
// the catalog. Corruption is handled as in Load.
func (s *Store) LoadWithoutSchemas() (*File, error) {
	st, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Version: FormatVersion, Nodes: map[string]*Entry{}}, nil
	}
	if err != nil {
		return s.Load()
	}
	size, mtime, ino := st.Size(), st.ModTime().UnixNano(), inode(st)
	if f, ok := s.cached(size, mtime, ino); ok {
		return f, nil
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return s.Load()
	}
	var lf liteFile
	if len(bytes.TrimSpace(data)) == 0 || json.Unmarshal(data, &lf) != nil {
		return s.Load() // corrupt: Load restores from the backup or explains
	}
	f := &File{Version: lf.Version, Nodes: make(map[string]*Entry, len(lf.Nodes))}
	for k, e := range lf.Nodes {
		if e == nil {
			continue
		}
		ne := &Entry{ClassName: e.ClassName, FilePath: e.FilePath, Type: e.Type, Kind: e.Kind, Group: e.Group, Interface: e.Interface}
		if e.MCP != nil {
			ne.MCP = &MCPInfo{Server: e.MCP.Server, Tool: e.MCP.Tool}
		}
		f.Nodes[k] = ne
	}
	if int64(len(data)) == size {
		s.writeCache(size, mtime, ino, f)
	}
	return f, nil
}
