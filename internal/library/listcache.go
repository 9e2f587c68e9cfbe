package library

import (
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
)

// FileVersion identifies one version of a file (fsutil.Version: size,
// mtime, and on Linux ctime and inode). Caches of data derived from saved
// workflows key their entries with it.
type FileVersion = fsutil.Version

// VersionOf returns the version of the file fi describes.
func VersionOf(fi fs.FileInfo) FileVersion { return fsutil.VersionOf(fi) }

// parsed is one cached parse of a saved workflow file: the result or the
// error, for the file version key.
type parsed struct {
	key   FileVersion
	saved *Saved
	err   error
}

// listCache keeps, per library directory and workflow name, the last parse
// of each file, so a long-lived process (pflow mcp serve answering
// workflow_list) does not re-parse unchanged files on every request. Every
// List still reads the directory and stats every file, and re-parses any
// file whose key changed: results always reflect the files on disk at the
// moment of the call.
var listCache = struct {
	sync.Mutex
	dirs map[string]map[string]*parsed
}{dirs: map[string]map[string]*parsed{}}

// cachedParse returns the cached parse of name if its file still has key.
func cachedParse(dir, name string, key FileVersion) (*parsed, bool) {
	listCache.Lock()
	defer listCache.Unlock()
	p, ok := listCache.dirs[dir][name]
	if !ok || p.key != key {
		return nil, false
	}
	return p, true
}

// storeParses replaces the cache of dir with the parses of the files seen by
// one List: entries of deleted files go away with it.
func storeParses(dir string, ps map[string]*parsed) {
	listCache.Lock()
	defer listCache.Unlock()
	listCache.dirs[dir] = ps
}

// loadKeyed reads and parses a saved workflow, returning the key of the
// version it read. The key is taken from the open file before reading, so a
// file changed while it is read gets a new key and is parsed again next time.
func (l *Library) loadKeyed(name string) (*Saved, FileVersion, error) {
	path := l.Path(name)
	f, err := os.Open(path)
	if err != nil {
		_, err := l.Load(name) // the usual not-found / cannot-read error
		return nil, FileVersion{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, FileVersion{}, pferr.Newf(pferr.Config, "cannot read workflow '%s': %v", name, err).WithWhere(path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, FileVersion{}, pferr.Newf(pferr.Config, "cannot read workflow '%s': %v", name, err).WithWhere(path)
	}
	s, err := l.parse(name, path, data)
	return s, VersionOf(fi), err
}
