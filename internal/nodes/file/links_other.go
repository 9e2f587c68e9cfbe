//go:build !unix

package file

import "path/filepath"

// resolveLinks returns path with its symlinks resolved (where it exists).
func resolveLinks(path string) (string, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r, nil
	}
	return path, nil
}
