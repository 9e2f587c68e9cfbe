//go:build !linux

package library

import "io/fs"

// inodeCtime is Linux-only; elsewhere size and mtime key the cache.
func inodeCtime(fs.FileInfo) (uint64, int64) { return 0, 0 }
