//go:build !linux

package fsutil

// replaceExisting is os.Rename when path exists (see checkThenRename).
func replaceExisting(tmp, path string) error { return checkThenRename(tmp, path) }
