// Package registry is pflow's node registry: the registry.json store (MCP and
// user entries, plus a snapshot of the core nodes), the Catalog the runtime
// looks node types up in, and keyword search over node metadata.
//
// registry.json is written atomically under an exclusive lock, with a .bak of
// the previous version that Load restores (with a warning) when the main file
// is corrupt (see docs/decisions.md, "Registry entries for MCP tools").
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
	"sort"
	"sync"
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
	// Hints are the tool's MCP annotations that decide whether a step may run
	// again after a crash or be cached, when its server is trusted (see
	// docs/decisions.md, "Recorded, resumable runs and the step cache").
	Hints *MCPHints `json:"hints,omitempty"`
	// SchemaHash digests the input schema at sync: a run that finds the live
	// tool's differs warns that the tool changed since.
	SchemaHash string `json:"schema_hash,omitempty"`
	// Protocol is the MCP protocol revision the server spoke at the sync
	// ("2026-07-28", "2025-11-25", ...; "" when not recorded).
	Protocol string `json:"protocol_version,omitempty"`
}

// MCPHints are the behaviour annotations an MCP tool declares (readOnlyHint,
// idempotentHint). They are claims of the server: pflow acts on them only for
// servers marked trusted.
type MCPHints struct {
	ReadOnly   bool `json:"read_only,omitempty"`
	Idempotent bool `json:"idempotent,omitempty"`
	// Destructive and OpenWorld are the tool's destructiveHint and
	// openWorldHint when it declares them (nil: not declared; MCP's default
	// for both is true). Shown, never acted on.
	Destructive *bool `json:"destructive,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

// Words are the annotations as a reader sees them: "read-only",
// "idempotent", "destructive", "not destructive", "open world", "closed world".
func (h *MCPHints) Words() []string {
	if h == nil {
		return nil
	}
	var out []string
	if h.ReadOnly {
		out = append(out, "read-only")
	}
	if h.Idempotent {
		out = append(out, "idempotent")
	}
	if h.Destructive != nil {
		out = append(out, map[bool]string{true: "destructive", false: "not destructive"}[*h.Destructive])
	}
	if h.OpenWorld != nil {
		out = append(out, map[bool]string{true: "open world", false: "closed world"}[*h.OpenWorld])
	}
	return out
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

	// Set by Patch: each entry's JSON as stored, the entries as loaded, and
	// encodings made once (see Patch, SameAsStored).
	stored map[string][]byte
	orig   map[string]*Entry
	enc    map[*Entry][]byte
}

// Store reads and writes registry.json.
type Store struct {
	Path string
	Log  io.Writer // warnings
	// CachePath optionally names a binary snapshot used by
	// LoadWithoutSchemas (e.g. $PFLOW_HOME/cache/registry.cache).
	CachePath string
	// OnRestore, when set, is called after a corrupt registry.json was
	// replaced by its backup (with the registry lock held). The backup may
	// lack what was written last — MCP tools synced since — so the caller
	// marks its MCP sync state stale here.
	OnRestore func()
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
		return nil, pferr.Wrap(lerr, pferr.Config, "").WithWhere(s.Path)
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
			if werr := fsutil.WriteFileAtomic(s.Path, data, 0o600); werr != nil {
				return nil, pferr.Wrap(werr, pferr.Config, fmt.Sprintf("the node registry is corrupt (%v) and restoring it from %s failed", err, bak)).WithWhere(s.Path)
			}
			fmt.Fprintf(s.Log, "Warning: %v; restored the previous version from %s (%d nodes). "+
				"MCP tools synced after that backup may be missing: each MCP server is synced again on the next run that uses it (or now: pflow mcp sync --all)\n", err, bak, len(bf.Nodes))
			if s.OnRestore != nil {
				s.OnRestore()
			}
			return bf, nil
		}
	}
	return nil, &pferr.Error{
		Kind:    pferr.Config,
		Message: fmt.Sprintf("the node registry is corrupt (%v) and there is no usable backup at %s", err, bak),
		Where:   s.Path,
		Fixes: []pferr.Fix{{Text: fmt.Sprintf("Delete %s and {do} to rebuild the core nodes,", s.Path), Do: pferr.PersonOnly("registry list")},
			{Text: "Then {do} to re-register MCP tools.", Do: pferr.SyncServer("--all")}},
		Err: err,
	}
}

// Update takes the exclusive lock, loads, calls fn, backs up the previous
// version to .bak and writes atomically. fn's error aborts without writing.
func (s *Store) Update(ctx context.Context, fn func(f *File) error) error {
	lk, err := fsutil.LockFile(ctx, s.Path, lockTimeout)
	if err != nil {
		return pferr.Wrap(err, pferr.Config, "").WithWhere(s.Path)
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
	data, err := json.Marshal(f) // compact: indenting 1,000 tools' schemas costs more than the rest
	if err != nil {
		return pferr.Newf(pferr.Internal, "encode the node registry: %v", err)
	}
	data = append(data, '\n')
	if err := fsutil.Backup(s.Path); err != nil {
		return pferr.Wrap(err, pferr.Config, "back up the node registry").WithWhere(s.Path)
	}
	if err := fsutil.WriteFileAtomic(s.Path, data, 0o600); err != nil {
		return saveErr(err, s.Path)
	}
	return nil
}

// saveErr reports a failed write of registry.json: a refused directory says
// so with its own fix; anything else is most likely a full disk.
func saveErr(err error, path string) *pferr.Error {
	e := pferr.Wrap(err, pferr.Config, "save the node registry").WithWhere(path)
	if e.Hint == "" {
		e.Hint = "Check that the directory is writable and the disk is not full."
	}
	return e
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
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	Hints  *MCPHints `json:"hints"`
	// SchemaHash, Protocol: see MCPInfo.
	SchemaHash string `json:"schema_hash"`
	Protocol   string `json:"protocol_version"`
}

// info is the MCPInfo of a lite entry: one place copies its fields, for
// LoadWithoutSchemas and Patch alike.
func (m *liteMCP) info() *MCPInfo {
	return &MCPInfo{Server: m.Server, Tool: m.Tool, Hints: m.Hints, SchemaHash: m.SchemaHash, Protocol: m.Protocol}
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
	size, when, ino := st.Size(), stamp(st), inode(st)
	key := fileKey{s.Path, size, when, ino}
	if f := lastLoaded.get(key); f != nil {
		return f, nil
	}
	if f, ok := s.cached(size, when, ino); ok {
		lastLoaded.put(key, f)
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
			ne.MCP = e.MCP.info()
		}
		f.Nodes[k] = ne
	}
	if int64(len(data)) == size {
		s.writeCache(size, when, ino, f)
		lastLoaded.put(key, f)
	}
	return f, nil
}

// fileKey identifies one version of a file: an atomic replace changes its
// inode, a write its size or its ctime (see stamp).
type fileKey struct {
	path        string
	size, stamp int64
	ino         uint64
}

// stamp is what tells versions of registry.json apart besides their size
// and inode: the ctime, which changes with every write and which no tool
// sets back (the mtime is restored by 'cp -p', rsync and touch, and a
// same-size edit with its mtime put back was served from the cache), or the
// mtime where there is no ctime.
func stamp(st os.FileInfo) int64 {
	if v := fsutil.VersionOf(st); v.CTime != 0 {
		return v.CTime
	}
	return st.ModTime().UnixNano()
}

// lastLoaded keeps the File LoadWithoutSchemas last decoded, for a
// long-lived process (pflow mcp serve, a worker) that builds its catalog
// for every run: while the file is unchanged, it is not decoded again.
// Callers share the File and must not modify it.
var lastLoaded loadMemo

type loadMemo struct {
	mu  sync.Mutex
	key fileKey
	f   *File
}

func (m *loadMemo) get(k fileKey) *File {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.key == k {
		return m.f
	}
	return nil
}

func (m *loadMemo) put(k fileKey, f *File) {
	m.mu.Lock()
	m.key, m.f = k, f
	m.mu.Unlock()
}

// ---- Patch: the lean read-modify-write ----

// Patch is Update for callers that add, replace and delete whole entries
// (mcp sync, mcp remove), made cheap for large registries:
//
//   - fn sees every entry without its MCP schemas (MCP.InputSchema and
//     OutputSchema are nil), as LoadWithoutSchemas returns them, taken from
//     the binary cache when it is current;
//   - entries fn leaves in place are written back exactly as they were read
//     (schemas and fields this pflow does not know included); only new or
//     replaced entries are encoded. fn must not modify an existing *Entry in
//     place: assign a new one (changes made in place are not saved);
//   - the file is written as compact JSON, and the cache is refreshed.
//
// Like Update it holds the exclusive lock, restores a corrupt file from the
// backup, keeps registry.json.bak and writes atomically (see docs/decisions.md,
// "Registry entries for MCP tools").
func (s *Store) Patch(ctx context.Context, fn func(f *File) error) error {
	lk, err := fsutil.LockFile(ctx, s.Path, lockTimeout)
	if err != nil {
		return pferr.Wrap(err, pferr.Config, "").WithWhere(s.Path)
	}
	defer lk.Unlock()
	f, old, perm, err := s.loadLean()
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
	data, err := f.encodeLean()
	if err != nil {
		return pferr.Newf(pferr.Internal, "encode the node registry: %v", err)
	}
	if old != nil {
		if err := fsutil.WriteFileAtomic(s.Path+".bak", old, perm); err != nil {
			return pferr.Wrap(err, pferr.Config, "back up the node registry").WithWhere(s.Path)
		}
	}
	if err := fsutil.WriteFileAtomic(s.Path, data, 0o600); err != nil {
		return saveErr(err, s.Path)
	}
	// Refresh the snapshot LoadWithoutSchemas reads (we still hold the lock,
	// so the file on disk is the one just written).
	if st, err := os.Stat(s.Path); err == nil && st.Size() == int64(len(data)) {
		s.writeCache(st.Size(), stamp(st), inode(st), f.withoutSchemas())
	}
	return nil
}

// loadLean reads registry.json for Patch, with the lock held: the entries
// without schemas, each entry's stored JSON (File.stored), and the file's
// bytes and permissions for the backup (nil when there is no file).
func (s *Store) loadLean() (*File, []byte, fs.FileMode, error) {
	st, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Version: FormatVersion, Nodes: map[string]*Entry{}}, nil, 0o600, nil
	}
	if err != nil {
		return nil, nil, 0, pferr.Newf(pferr.Config, "cannot read the node registry: %v", err).WithWhere(s.Path).
			WithHint("Check the file's permissions.")
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, nil, 0, pferr.Newf(pferr.Config, "cannot read the node registry: %v", err).WithWhere(s.Path).
			WithHint("Check the file's permissions.")
	}
	perm := st.Mode().Perm()
	var f *File
	if int64(len(data)) == st.Size() {
		// A current cache was decoded from exactly these bytes: valid JSON.
		f, _ = s.cached(st.Size(), stamp(st), inode(st))
	}
	if f == nil {
		var lf liteFile
		if len(bytes.TrimSpace(data)) > 0 && json.Unmarshal(data, &lf) == nil {
			f = lf.file()
		}
	}
	if f != nil {
		if raw, ok := splitNodes(data); ok && coversAll(raw, f.Nodes) {
			f.stored = raw
			f.orig = make(map[string]*Entry, len(f.Nodes))
			for k, e := range f.Nodes {
				f.orig[k] = e
			}
			return f, data, perm, nil
		}
	}
	// Corrupt, or not splittable: the full path (restores from the backup).
	full, err := s.loadOrRestore()
	if err != nil {
		return nil, nil, 0, err
	}
	full.orig = make(map[string]*Entry, len(full.Nodes))
	for k, e := range full.Nodes {
		full.orig[k] = e
	}
	if data, err = os.ReadFile(s.Path); err != nil {
		data = nil
	}
	return full, data, perm, nil
}

func (lf *liteFile) file() *File {
	f := &File{Version: lf.Version, Nodes: make(map[string]*Entry, len(lf.Nodes))}
	for k, e := range lf.Nodes {
		if e == nil {
			continue
		}
		ne := &Entry{ClassName: e.ClassName, FilePath: e.FilePath, Type: e.Type, Kind: e.Kind, Group: e.Group, Interface: e.Interface}
		if e.MCP != nil {
			ne.MCP = e.MCP.info()
		}
		f.Nodes[k] = ne
	}
	return f
}

func coversAll(raw map[string][]byte, nodes map[string]*Entry) bool {
	for k := range nodes {
		if raw[k] == nil {
			return false
		}
	}
	return true
}

// SameAsStored reports whether e encodes exactly like the entry stored under
// key when the file was loaded (false when there was none). In Patch it
// compares with the stored JSON; elsewhere with the entry under key now.
func (f *File) SameAsStored(key string, e *Entry) bool {
	if e == nil {
		return false
	}
	b, err := f.encoding(e)
	if err != nil {
		return false
	}
	if raw := f.stored[key]; raw != nil {
		if compactEqual(raw, b) {
			return true
		}
		// Written by another program (other key order, spacing): compare
		// what this pflow would write for it.
		var old Entry
		if json.Unmarshal(raw, &old) != nil {
			return false
		}
		ob, err := json.Marshal(&old)
		return err == nil && bytes.Equal(ob, b)
	}
	old := f.Nodes[key]
	if f.orig != nil {
		old = f.orig[key]
	}
	if old == nil {
		return false
	}
	ob, err := f.encoding(old)
	return err == nil && bytes.Equal(ob, b)
}

// encoding returns e's compact JSON, encoded once per File.
func (f *File) encoding(e *Entry) ([]byte, error) {
	if b, ok := f.enc[e]; ok {
		return b, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	if f.enc == nil {
		f.enc = map[*Entry][]byte{}
	}
	f.enc[e] = b
	return b, nil
}

// encodeLean writes the file as compact JSON (keys sorted, as
// encoding/json writes a map), reusing the stored bytes of every entry
// that is still the one loaded.
func (f *File) encodeLean() ([]byte, error) {
	keys := make([]string, 0, len(f.Nodes))
	size := 64
	for k, e := range f.Nodes {
		if e == nil {
			continue
		}
		keys = append(keys, k)
		size += len(f.stored[k]) + len(k) + 4
	}
	sort.Strings(keys)
	out := make([]byte, 0, size)
	v, err := json.Marshal(f.Version)
	if err != nil {
		return nil, err
	}
	out = append(out, `{"version":`...)
	out = append(out, v...)
	out = append(out, `,"nodes":{`...)
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(out, kb...)
		out = append(out, ':')
		e := f.Nodes[k]
		if raw := f.stored[k]; raw != nil && f.orig[k] == e {
			out = appendCompact(out, raw)
			continue
		}
		b, err := f.encoding(e)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	out = append(out, "}}\n"...)
	return out, nil
}

// withoutSchemas is f as LoadWithoutSchemas returns it (for the cache).
func (f *File) withoutSchemas() *File {
	out := &File{Version: f.Version, Nodes: make(map[string]*Entry, len(f.Nodes))}
	for k, e := range f.Nodes {
		if e == nil {
			continue
		}
		if e.MCP != nil && (e.MCP.InputSchema != nil || e.MCP.OutputSchema != nil) {
			c, m := *e, *e.MCP // every field but the schemas, whatever MCPInfo gains
			m.InputSchema, m.OutputSchema = nil, nil
			c.MCP = &m
			e = &c
		}
		out.Nodes[k] = e
	}
	return out
}

// compactEqual reports whether valid JSON raw, without its insignificant
// whitespace, is exactly b.
func compactEqual(raw, b []byte) bool {
	if len(raw) == len(b) {
		return bytes.Equal(raw, b)
	}
	var c bytes.Buffer
	c.Grow(len(b))
	return json.Compact(&c, raw) == nil && bytes.Equal(c.Bytes(), b)
}

// appendCompact appends valid JSON src to dst without insignificant
// whitespace.
func appendCompact(dst, src []byte) []byte {
	b := bytes.NewBuffer(dst)
	if json.Compact(b, src) != nil {
		return append(dst, src...)
	}
	return b.Bytes()
}

// splitNodes returns the raw JSON of each member of the top-level "nodes"
// object of data, as encoding/json reads it (a repeated key: the last one
// wins). ok is false when the data is not JSON of that shape. (A
// hand-written scanner was 3 ms faster on a 1,000-tool registry; the sync
// target holds without it: docs/BENCHMARKS.md.)
func splitNodes(data []byte) (map[string][]byte, bool) {
	var top struct {
		Nodes map[string]json.RawMessage `json:"nodes"`
	}
	if json.Unmarshal(data, &top) != nil {
		return nil, false
	}
	nodes := make(map[string][]byte, len(top.Nodes))
	for k, v := range top.Nodes {
		nodes[k] = v
	}
	return nodes, true
}
