package registry

import (
	"bytes"
	"encoding/gob"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pflow-go/pflow/internal/fsutil"
)

func init() {
	// Interface-typed values inside node.Field (Default, Enum).
	gob.Register([]any{})
	gob.Register(map[string]any{})
}

// cacheFile is a binary snapshot of registry.json without the MCP schemas,
// valid while registry.json has the same size and modification time.
type cacheFile struct {
	Size, ModTime int64
	Inode         uint64
	Version       string
	Nodes         map[string]*Entry
}

// CachePath, when set, names a binary cache of registry.json that
// LoadWithoutSchemas uses to skip JSON decoding (derived data: deleting it
// is always safe).
func (s *Store) cached(size, mtime int64, ino uint64) (*File, bool) {
	if s.CachePath == "" {
		return nil, false
	}
	data, err := os.ReadFile(s.CachePath)
	if err != nil {
		return nil, false
	}
	var c cacheFile
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&c) != nil || c.Size != size || c.ModTime != mtime || c.Inode != ino {
		return nil, false
	}
	if c.Nodes == nil {
		c.Nodes = map[string]*Entry{}
	}
	return &File{Version: c.Version, Nodes: c.Nodes}, true
}

func (s *Store) writeCache(size, mtime int64, ino uint64, f *File) {
	if s.CachePath == "" {
		return
	}
	var b bytes.Buffer
	if gob.NewEncoder(&b).Encode(&cacheFile{Size: size, ModTime: mtime, Inode: ino, Version: f.Version, Nodes: f.Nodes}) != nil {
		return
	}
	_ = os.MkdirAll(filepath.Dir(s.CachePath), 0o755)
	_ = fsutil.WriteFileAtomic(s.CachePath, b.Bytes(), 0o644)
}

// inode returns the file's inode number (0 where unknown): an atomic
// replace always changes it, even within one mtime tick.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
