package fsutil

import (
	"io/fs"
	"os"
	"sync"
	"time"
)

// Version identifies one version of a file's content: pflow replaces a
// file by renaming a new one into place (a new inode), and any other write
// changes its ctime (which no tool can set back, unlike the mtime, which
// 'cp -p', rsync and touch can) or its size or mtime. CTime and Ino are 0
// where unsupported (not Linux).
type Version struct {
	Size, MTime, CTime int64
	Ino                uint64
}

// VersionOf returns the version fi describes.
func VersionOf(fi fs.FileInfo) Version {
	v := Version{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	v.Ino, v.CTime = inodeCtime(fi)
	return v
}

// settled is how old a version must be before Memo remembers it. A file's
// times come from a clock that ticks every few milliseconds, so a write in
// the same tick as the version read, in place and to the same size, would
// leave every field of Version as it was; a version older than a tick when
// it is read is followed only by writes in later ticks, which change its
// ctime (git's "racily clean" rule).
var settled = time.Second

// memoCap bounds the paths a Memo remembers.
const memoCap = 256

// Memo keeps what decode made of the versions of files last read, so a
// long-lived process (pflow mcp serve) that reads the same configuration or
// workflow file for every request reads and decodes it once while it does
// not change. The values are shared by every caller: they must not be
// modified.
type Memo[T any] struct {
	mu sync.Mutex
	m  map[string]memoEntry[T]
}

type memoEntry[T any] struct {
	v   Version
	val T
}

// Load returns decode's value of path's content, from memory when the
// file's version is the one last decoded. A read error is returned as
// os.ReadFile's, a decode error as decode's (neither is remembered).
func (m *Memo[T]) Load(path string, decode func(data []byte) (T, error)) (T, error) {
	var zero T
	fi, err := os.Stat(path)
	if err != nil {
		return zero, err
	}
	v := VersionOf(fi)
	m.mu.Lock()
	e, ok := m.m[path]
	m.mu.Unlock()
	if ok && e.v == v {
		return e.val, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, err
	}
	val, err := decode(data)
	if err != nil {
		return val, err
	}
	// Remembered only when the content read is the version stat saw (same
	// size) and that version has settled.
	if int64(len(data)) == v.Size && time.Since(time.Unix(0, max(v.MTime, v.CTime))) > settled {
		m.mu.Lock()
		if m.m == nil || len(m.m) >= memoCap {
			m.m = map[string]memoEntry[T]{}
		}
		m.m[path] = memoEntry[T]{v, val}
		m.mu.Unlock()
	}
	return val, nil
}
