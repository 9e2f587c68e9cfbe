//go:build !unix

package fsutil

import (
	"os"
	"path/filepath"
)

// ResolveUnplanted returns path with its symlinks resolved (where it exists).
func ResolveUnplanted(path string) (string, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r, nil
	}
	return path, nil
}

// OpenUnplanted opens path for reading.
func OpenUnplanted(path string) (*os.File, error) { return os.Open(path) }

// ReadFileUnplanted reads the file at path.
func ReadFileUnplanted(path string) ([]byte, error) { return os.ReadFile(path) }
