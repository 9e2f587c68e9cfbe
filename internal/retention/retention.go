// Package retention keeps a directory of per-run records (trace files, run
// records) from growing forever: it removes the entries beyond a count and
// those older than an age.
package retention

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Policy says which entries of a directory are kept. A zero field is no limit.
type Policy struct {
	// MaxCount is how many of the newest entries are kept.
	MaxCount int
	// MaxAge removes entries last modified longer ago than this.
	MaxAge time.Duration
	// Recycle, when set, is offered each file Prune removes first: it may
	// keep it (emptied, under another name) for re-use instead of deleting
	// it (trace.Recycler); true means the file is gone from the listing.
	Recycle func(path string) bool
}

// StaleTemp is how old an abandoned temporary file of a matching entry (the
// ".<name>.*.tmp" files fsutil's atomic writes use, left behind by a writer
// killed mid-write) must be before Prune removes it. A live writer finishes
// far sooner.
const StaleTemp = time.Hour

// Prune removes from dir the entries whose names match pattern (path.Match
// syntax, e.g. "workflow-trace-*.json") that p does not keep: first those
// older than p.MaxAge, then the oldest beyond p.MaxCount (by modification
// time, then name). Matching directories are removed with their content;
// symbolic links are removed, never followed. It also removes stale
// temporary files of matching names (see StaleTemp).
//
// Prune is safe to run from several processes at once: an entry another
// process removed first is not an error. It returns how many entries it
// removed; a missing dir is nothing to do. Removal failures are collected
// and returned together after every entry was tried.
func Prune(dir, pattern string, p Policy, now time.Time) (int, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return 0, fmt.Errorf("retention pattern %q: %w", pattern, err)
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cannot list %s to remove old entries: %w", dir, err)
	}
	type entry struct {
		name string
		mod  time.Time
		dir  bool
	}
	var keep []entry
	var errs []error
	removed := 0
	remove := func(name string, isDir bool) {
		path := filepath.Join(dir, name)
		var err error
		switch {
		case isDir:
			err = os.RemoveAll(path)
		case p.Recycle != nil && p.Recycle(path):
		default:
			err = os.Remove(path)
		}
		switch {
		case err == nil:
			removed++
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	for _, e := range ents {
		name := e.Name()
		if isStaleTempName(name, pattern) {
			if info, err := e.Info(); err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > StaleTemp {
				remove(name, false)
			}
			continue
		}
		if ok, _ := filepath.Match(pattern, name); !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		isDir := info.IsDir() // a symlink to a directory is not: the link is removed, not its target
		if p.MaxAge > 0 && now.Sub(info.ModTime()) > p.MaxAge {
			remove(name, isDir)
			continue
		}
		keep = append(keep, entry{name, info.ModTime(), isDir})
	}
	if p.MaxCount > 0 && len(keep) > p.MaxCount {
		sort.Slice(keep, func(i, j int) bool {
			if !keep[i].mod.Equal(keep[j].mod) {
				return keep[i].mod.After(keep[j].mod)
			}
			return keep[i].name > keep[j].name
		})
		for _, e := range keep[p.MaxCount:] {
			remove(e.name, e.dir)
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("cannot remove old entries of %s (check the directory's permissions): %w", dir, errors.Join(errs...))
	}
	return removed, nil
}

// isStaleTempName reports whether name is ".<x>.<random>.tmp" for an x that
// matches pattern (the temp-file naming of fsutil.WriteFileAtomic).
func isStaleTempName(name, pattern string) bool {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	inner := strings.TrimSuffix(name[1:], ".tmp")
	i := strings.LastIndexByte(inner, '.')
	if i < 0 {
		return false
	}
	ok, _ := filepath.Match(pattern, inner[:i])
	return ok
}
