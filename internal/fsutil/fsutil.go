// Package fsutil provides crash-safe file writes: atomic replace (temp file +
// fsync + rename), advisory locks that serialize read-modify-write cycles
// across processes, and a .bak of the previous version.
package fsutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/pflow-go/pflow/internal/pferr"
)

// NotWritableError is a write that failed because a directory refuses it:
// its permissions (EACCES, EPERM) or a read-only file system (EROFS). Every
// write in this package (atomic writes, backups, lock files) reports such a
// failure as a *NotWritableError, naming the directory and the fix, instead
// of a bare "permission denied" or a lock that looks stuck.
type NotWritableError struct {
	Path       string // what was being written (file, lock file or directory)
	Dir        string // the directory that refused the write
	ReadOnlyFS bool   // EROFS: the file system is mounted read-only
	Err        error  // the underlying error
}

func (e *NotWritableError) Error() string {
	if e.ReadOnlyFS {
		return fmt.Sprintf("cannot write %s: %s is on a read-only file system", e.Path, e.Dir)
	}
	return fmt.Sprintf("cannot write %s: the directory %s is not writable (permission denied)", e.Path, e.Dir)
}

func (e *NotWritableError) Unwrap() error { return e.Err }

// Hint says how to fix the write.
func (e *NotWritableError) Hint() string {
	if e.ReadOnlyFS {
		return fmt.Sprintf("Remount the file system of %s read-write, or set PFLOW_HOME to a directory you own on a writable file system (mkdir -m 700 DIR; never a shared folder such as /tmp).", e.Dir)
	}
	return fmt.Sprintf("Fix the permissions of %s (e.g. chmod u+w %s, or chown it to your user), or set PFLOW_HOME to a writable directory.", e.Dir, e.Dir)
}

// PFError is the user-facing form (a config error with the fix as hint).
func (e *NotWritableError) PFError() *pferr.Error {
	return &pferr.Error{Kind: pferr.Config, Message: e.Error(), Hint: e.Hint(), Err: e,
		Details: map[string]any{"directory": e.Dir, "read_only_file_system": e.ReadOnlyFS}}
}

// dirPerm is the mode of the directories this package makes: pflow's
// stores are its user's alone (files in them are written 0600 by their
// callers), so no other user of the machine can list, read or add to them.
const dirPerm fs.FileMode = 0o700

// The file-system calls that create things, replaceable by tests to inject
// EACCES or EROFS (as root, permissions do not stop a test's writes).
var (
	mkdirAll   = os.MkdirAll
	createTemp = os.CreateTemp
	openFile   = os.OpenFile
)

// notWritable returns err as a *NotWritableError when it is a permission or
// read-only-file-system failure, else err unchanged. path is what was being
// written; the refusing directory is the parent of the path the failing call
// named (the file it created, or the directory it tried to make).
func notWritable(path string, err error) error {
	if err == nil {
		return nil
	}
	var nw *NotWritableError
	if errors.As(err, &nw) {
		return err
	}
	rofs := errors.Is(err, syscall.EROFS)
	if !rofs && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	failed := path
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		failed = pe.Path
	case errors.As(err, &le):
		failed = le.New
	}
	return &NotWritableError{Path: path, Dir: filepath.Dir(failed), ReadOnlyFS: rofs, Err: err}
}

// WriteFileAtomic writes data to path so that readers (and a crash at any
// point) see either the old or the new content, never a mix. The parent
// directory is created if needed.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return WriteAtomicFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// ReplaceFile is WriteFileAtomic without flushing to the disk: readers and a
// killed process see the old or the new content, never a mix, but after a
// power loss the newest content may be missing. It is for data that is
// written often and whose loss costs little (a run's record: a record
// without run.json is skipped by readers), where two fsyncs per file would
// cost more than the work being recorded.
func ReplaceFile(path string, data []byte, perm fs.FileMode) error {
	return writeAtomic(path, perm, false, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomicFunc is WriteFileAtomic for content streamed by write (which
// need not buffer it): write's error aborts and leaves path as it was.
func WriteAtomicFunc(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return writeAtomic(path, perm, true, write)
}

// CreateFunc writes a file that is written once under a name never used
// before (a trace), with content streamed by write: atomic for readers and
// a killed process, not flushed to the disk. Temp files a killed writer
// left are not looked for (a new name has none): the caller's retention
// removes them (retention.Prune).
func CreateFunc(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return writeAtomicSweep(path, perm, false, false, write)
}

func writeAtomic(path string, perm fs.FileMode, durable bool, write func(io.Writer) error) error {
	return writeAtomicSweep(path, perm, durable, true, write)
}

// ReplaceExisting is WriteFileAtomic of a file that must exist: when path
// is gone (deleted by another process, which holds none of pflow's locks,
// while its new content was made), it stays gone and the error is
// fs.ErrNotExist. The check and the replacement are one step where the
// file system can swap two names (Linux: renameat2 RENAME_EXCHANGE).
func ReplaceExisting(path string, data []byte, perm fs.FileMode) error {
	return writeAtomicWith(path, perm, true, true, replaceExisting, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomicSweep is writeAtomic; with sweep, it also removes the temp
// files of path that killed writers left.
func writeAtomicSweep(path string, perm fs.FileMode, durable, sweep bool, write func(io.Writer) error) error {
	return writeAtomicWith(path, perm, durable, sweep, os.Rename, write)
}

// writeAtomicWith is writeAtomicSweep that puts the temp file in place
// with place (os.Rename, or replaceExisting).
func writeAtomicWith(path string, perm fs.FileMode, durable, sweep bool, place func(tmp, path string) error, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := mkdirAll(dir, dirPerm); err != nil {
		return notWritable(path, fmt.Errorf("create directory %s: %w", dir, err))
	}
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return notWritable(path, fmt.Errorf("write %s: %w", path, err))
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := place(tmpName, path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, err)
	} else if err != nil {
		return notWritable(path, fmt.Errorf("write %s: %w", path, err))
	}
	ok = true
	if durable {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	if sweep {
		removeStaleTemps(path)
	}
	return nil
}

// staleAfter is how old a temp file must be before a later write of the same
// file removes it: a writer killed mid-write (kill -9, power loss) leaves its
// temp file behind; a live writer finishes far sooner.
const staleAfter = 10 * time.Minute

// removeStaleTemps deletes temp files that crashed writers of path left.
func removeStaleTemps(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+globEscape(filepath.Base(path))+".*.tmp"))
	for _, m := range matches {
		if st, err := os.Lstat(m); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > staleAfter {
			os.Remove(m)
		}
	}
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// CreateFileAtomic is WriteFileAtomic that fails with fs.ErrExist when path
// already exists (the new file is linked into place, never replacing).
func CreateFileAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := mkdirAll(dir, dirPerm); err != nil {
		return notWritable(path, fmt.Errorf("create directory %s: %w", dir, err))
	}
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return notWritable(path, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return notWritable(path, err)
	}
	return nil
}

// Lock is an exclusive advisory lock on path+".lock".
type Lock struct{ fl *flock.Flock }

// LockFile takes an exclusive lock guarding path, waiting up to timeout.
// A lock file that cannot be created (read-only or unwritable directory) is
// a *NotWritableError at once, not a wait.
func LockFile(ctx context.Context, path string, timeout time.Duration) (*Lock, error) {
	lockPath := path + ".lock"
	if err := mkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return nil, notWritable(lockPath, err)
	}
	// Create the lock file first: a directory that refuses it is reported
	// as such, not as a lock that never comes.
	f, err := openFile(lockPath, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return nil, notWritable(lockPath, err)
	}
	f.Close()
	fl := flock.New(lockPath)
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ok, err := fl.TryLockContext(lctx, 10*time.Millisecond)
	if ok {
		return &Lock{fl: fl}, nil
	}
	if err != nil && lctx.Err() == nil {
		// Not a wait that ran out: opening or locking the lock file failed.
		if nw := notWritable(lockPath, err); nw != err {
			return nil, nw
		}
		return nil, fmt.Errorf("could not lock %s: %w", path, err)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("could not lock %s: %w", path, ctx.Err())
	}
	return nil, fmt.Errorf("could not lock %s within %s (another pflow process may be stuck; remove %s.lock if none is running)", path, timeout, path)
}

// TryLockFile takes the lock at path+".lock" if no one holds it, without
// waiting: ok is false when another holder has it. (A zero-wait LockFile can
// fail on a loaded machine before its first attempt, when its deadline has
// passed already; this makes exactly one attempt.)
func TryLockFile(path string) (l *Lock, ok bool, err error) {
	lockPath := path + ".lock"
	if err := mkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return nil, false, notWritable(lockPath, err)
	}
	f, err := openFile(lockPath, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return nil, false, notWritable(lockPath, err)
	}
	f.Close()
	fl := flock.New(lockPath)
	ok, err = fl.TryLock()
	if err != nil {
		if nw := notWritable(lockPath, err); nw != err {
			return nil, false, nw
		}
		return nil, false, fmt.Errorf("could not lock %s: %w", path, err)
	}
	if !ok {
		return nil, false, nil
	}
	return &Lock{fl: fl}, true, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.fl == nil {
		return nil
	}
	return l.fl.Unlock()
}

// Backup copies path to path+".bak" atomically, readable by its owner
// only. A missing path is not an error.
func Backup(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path+".bak", data, st.Mode().Perm()&^0o077)
}

// checkThenRename renames tmp to path when path exists; fs.ErrNotExist
// otherwise. A deletion between the check and the rename is not seen.
func checkThenRename(tmp, path string) error {
	if _, err := os.Lstat(path); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// EmptyFile empties the regular file at path (a symlink is not followed)
// to keep it for re-use, and closes it at once: ext4 flushes a file
// truncated to nothing when it is next closed after a write; closed now,
// with nothing to flush, it is not flushed when it is written again.
func EmptyFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
