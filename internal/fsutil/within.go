package fsutil

import (
	"path/filepath"
	"strings"
)

// WithinDirs reports whether the absolute path abs lies under one of dirs
// once symlinks are resolved, and returns abs resolved. For a path that
// does not exist yet (a file a step will write) the symlinks of its deepest
// existing parent are resolved, so a link cannot lead a new file out.
func WithinDirs(dirs []string, abs string) (string, bool) {
	real := ResolveExisting(abs)
	for _, d := range dirs {
		root, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		if Within(root, real) {
			return real, true
		}
	}
	return real, false
}

// ResolveExisting resolves the symlinks of abs, or of its deepest existing
// parent with the rest joined back on.
func ResolveExisting(abs string) string {
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// Within reports whether path is root or inside it (both clean and
// absolute; no symlinks are resolved).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
