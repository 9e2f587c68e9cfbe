package fsutil

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/pferr"
)

// refuse makes every create call under dir fail with errno, as a read-only
// (EROFS) or unwritable (EACCES) directory does. Tests run as root here, and
// root ignores permissions, so the failure is injected at the fsutil layer;
// internal/reliability checks the same with a real unwritable home.
func refuse(t *testing.T, dir string, errno syscall.Errno) {
	t.Helper()
	inside := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) }
	m, c, o := mkdirAll, createTemp, openFile
	t.Cleanup(func() { mkdirAll, createTemp, openFile = m, c, o })
	mkdirAll = func(p string, perm fs.FileMode) error {
		// Like os.MkdirAll: the first missing directory is the one that fails.
		first := ""
		for q := p; ; q = filepath.Dir(q) {
			if _, err := os.Stat(q); err == nil || q == filepath.Dir(q) {
				break
			}
			first = q
		}
		if first != "" && inside(first) {
			return &fs.PathError{Op: "mkdir", Path: first, Err: errno}
		}
		return m(p, perm)
	}
	createTemp = func(d, pattern string) (*os.File, error) {
		if inside(d) {
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(d, strings.Replace(pattern, "*", "123", 1)), Err: errno}
		}
		return c(d, pattern)
	}
	openFile = func(p string, flag int, perm fs.FileMode) (*os.File, error) {
		if _, err := os.Stat(p); err != nil && flag&os.O_CREATE != 0 && inside(p) {
			return nil, &fs.PathError{Op: "open", Path: p, Err: errno}
		}
		return o(p, flag, perm)
	}
}

// TestNotWritableNamesTheDirectory: every write into a directory that
// refuses it — lock, atomic write, create, backup, and a missing
// subdirectory of such a directory — fails at once with a
// *NotWritableError that names the directory, the cause and the fix, never
// with a lock that looks stuck.
func TestNotWritableNamesTheDirectory(t *testing.T) {
	for _, c := range []struct {
		errno syscall.Errno
		cause string
		fix   string
	}{
		{syscall.EACCES, "is not writable (permission denied)", "Fix the permissions of"},
		{syscall.EROFS, "is on a read-only file system", "Remount the file system of"},
	} {
		for _, op := range []struct {
			name string
			sub  string // path of the target below home
			do   func(path string) error
		}{
			{"lock", "settings.json", func(p string) error {
				l, err := LockFile(context.Background(), p, time.Hour)
				l.Unlock()
				return err
			}},
			{"lock in a missing subdirectory", "workflows/.locks/x", func(p string) error {
				_, err := LockFile(context.Background(), p, time.Hour)
				return err
			}},
			{"atomic write", "registry.json", func(p string) error { return WriteFileAtomic(p, []byte("{}"), 0o644) }},
			{"atomic write in a missing subdirectory", "debug/trace.json", func(p string) error { return WriteFileAtomic(p, []byte("{}"), 0o600) }},
			{"create", "workflows/x.pflow.md", func(p string) error { return CreateFileAtomic(p, []byte("x"), 0o644) }},
			{"backup", "registry.json", func(p string) error { return Backup(p) }},
		} {
			t.Run(c.errno.Error()+"/"+op.name, func(t *testing.T) {
				home := t.TempDir()
				path := filepath.Join(home, op.sub)
				os.WriteFile(filepath.Join(home, "registry.json"), []byte("{}"), 0o644)
				refuse(t, home, c.errno)
				err := op.do(path)
				var nw *NotWritableError
				if !errors.As(err, &nw) {
					t.Fatalf("got %T %v, want *NotWritableError", err, err)
				}
				if nw.Dir != home || nw.ReadOnlyFS != (c.errno == syscall.EROFS) || !errors.Is(err, c.errno) {
					t.Errorf("dir %q (want %q), read-only fs %v, wraps %v: %v", nw.Dir, home, nw.ReadOnlyFS, c.errno, nw.Err)
				}
				msg := err.Error()
				if !strings.Contains(msg, home+" "+c.cause) {
					t.Errorf("message %q does not say %q", msg, home+" "+c.cause)
				}
				if strings.Contains(msg, "stuck") || strings.Contains(msg, "within") {
					t.Errorf("message blames a lock: %q", msg)
				}
				pe := pferr.Wrap(err, pferr.Internal, "save settings")
				if pe.Kind != pferr.Config || !strings.HasPrefix(pe.Message, "save settings: cannot write ") ||
					!strings.Contains(pe.Hint, c.fix+" "+home) || !strings.Contains(pe.Hint, "PFLOW_HOME") {
					t.Errorf("user-facing form: kind %s, message %q, hint %q", pe.Kind, pe.Message, pe.Hint)
				}
			})
		}
	}
}

// TestNotWritableLeavesOtherErrorsAlone: only permission and read-only
// failures are rewritten; a full disk stays what it is.
func TestNotWritableLeavesOtherErrorsAlone(t *testing.T) {
	err := &fs.PathError{Op: "write", Path: "/h/x", Err: syscall.ENOSPC}
	if got := notWritable("/h/x", err); got != error(err) {
		t.Fatalf("ENOSPC rewritten: %v", got)
	}
	if pe := pferr.Wrap(err, pferr.Config, "save"); pe.Kind != pferr.Config || pe.Message != "save: write /h/x: no space left on device" || pe.Hint != "" {
		t.Fatalf("plain error wrapped as %+v", pe)
	}
}
