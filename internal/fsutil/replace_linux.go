package fsutil

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// replaceExisting swaps tmp and path, then removes tmp (now the old
// content); fs.ErrNotExist when path is not there. A file system that
// cannot swap names falls back to a check and a rename.
func replaceExisting(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(err, unix.ENOENT):
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: fs.ErrNotExist}
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return checkThenRename(tmp, path)
	}
	return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
}
