//go:build unix

package home

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/pferr"
)

// asOtherUser makes dir belong to another user than the one Check asks
// for: chowned to nobody (65534) when the test runs as root, as CI does;
// otherwise Check is told the current user is someone else.
func asOtherUser(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return
	}
	me := os.Geteuid()
	geteuid = func() int { return me + 1 }
	t.Cleanup(func() { geteuid = os.Geteuid })
}

func TestCheckRefusesHomeOfAnotherUser(t *testing.T) {
	root := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	asOtherUser(t, root)
	err := Check(Resolve(root))
	var pe *pferr.Error
	if !errors.As(err, &pe) {
		t.Fatalf("Check accepted a home owned by another user: %v", err)
	}
	if pe.Kind != pferr.Security || !strings.Contains(pe.Message, root) || !strings.Contains(pe.Message, "belongs to") ||
		!strings.Contains(pe.Message, "not to you") || !strings.Contains(pe.Message, "uid ") {
		t.Errorf("message %q (kind %s): want the directory, its owner and the current user", pe.Message, pe.Kind)
	}
	if !strings.Contains(pe.Hint, "PFLOW_HOME") || !strings.Contains(pe.Hint, "you own") || strings.Contains(pe.Hint, "/tmp/") {
		t.Errorf("hint %q: want a directory you own, and no shared folder suggested", pe.Hint)
	}
	if pe.Details["directory"] != root {
		t.Errorf("details %v: want the directory", pe.Details)
	}
}

func TestCheckRefusesHomeOthersCanWrite(t *testing.T) {
	for _, c := range []struct {
		mode os.FileMode
		who  string
	}{{0o770, "its group"}, {0o707, "every user"}, {0o777, "its group and every user"}, {0o1777, "its group and every user"}} {
		root := filepath.Join(t.TempDir(), "home")
		if err := os.Mkdir(root, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(root, c.mode); err != nil {
			t.Fatal(err)
		}
		err := Check(Resolve(root))
		var pe *pferr.Error
		if !errors.As(err, &pe) {
			t.Fatalf("mode %o: Check accepted it: %v", c.mode, err)
		}
		if !strings.Contains(pe.Message, root) || !strings.Contains(pe.Message, "is writable by "+c.who) || !strings.Contains(pe.Message, "(mode ") {
			t.Errorf("mode %o: message %q: want the directory, who may write and the mode", c.mode, pe.Message)
		}
		if !strings.Contains(pe.Hint, "chmod 700 "+root) {
			t.Errorf("mode %o: hint %q: want chmod 700 DIR", c.mode, pe.Hint)
		}
	}
}

func TestCheckAcceptsPrivateAndMissingHome(t *testing.T) {
	for _, mode := range []os.FileMode{0o700, 0o755, 0o750} {
		root := filepath.Join(t.TempDir(), "home")
		os.Mkdir(root, 0o700)
		os.Chmod(root, mode)
		if err := Check(Resolve(root)); err != nil {
			t.Errorf("mode %o: %v", mode, err)
		}
	}
	if err := Check(Resolve(filepath.Join(t.TempDir(), "not", "yet"))); err != nil {
		t.Errorf("a home pflow will create: %v", err)
	}
	// A symlinked home is judged by the directory it leads to.
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(real, link)
	if err := Check(Resolve(link)); err != nil {
		t.Errorf("symlink to a private home: %v", err)
	}
	os.Chmod(real, 0o777)
	if err := Check(Resolve(link)); err == nil {
		t.Errorf("symlink to a world-writable home was accepted")
	}
}

// A home reached through a symlink another user owns is refused, even when
// it leads to a private home of ours: its owner could point it at a
// directory of theirs between the check and the reads after it.
func TestCheckRefusesHomeThroughAnotherUsersLink(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real")
	os.Mkdir(real, 0o700)
	shared := t.TempDir()
	for _, c := range []struct{ name, link, root string }{
		{"the home itself", filepath.Join(shared, "home"), filepath.Join(shared, "home")},
		{"a folder on the way", filepath.Join(shared, "dir"), filepath.Join(shared, "dir", "real")},
	} {
		target := real
		if c.link != c.root {
			target = filepath.Dir(real)
		}
		if err := os.Symlink(target, c.link); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			os.Lchown(c.link, 65534, 65534)
		} else {
			me := os.Geteuid()
			geteuid = func() int { return me + 1 }
		}
		err := Check(Resolve(c.root))
		geteuid = os.Geteuid
		var pe *pferr.Error
		if !errors.As(err, &pe) || pe.Kind != pferr.Security || !strings.Contains(pe.Message, "is reached through the symlink "+c.link+", which belongs to ") ||
			!strings.Contains(pe.Hint, "PFLOW_HOME") || pe.Details["symlink"] != c.link {
			t.Errorf("%s: %v, want the link refused", c.name, err)
		}
	}
}
