// Package realpython puts the python3 interpreter itself first on PATH
// when the python3 found there is a version manager's shim (pyenv, asdf).
//
// pflow's code node starts a fresh `python3` for every execution, so a
// test that runs code steps starts it many times. A pyenv shim is a bash
// script that runs pyenv to choose the interpreter before starting it: on
// the 2-core test machine that costs 0.5–3 s per start, where the
// interpreter alone takes 0.2 s (two testscripts with code steps: 13–22 s
// through the shim, 5 s without). The tests still run the interpreter the
// shim picks for a directory that pins no version (its global choice):
// a link to it, in a directory of the system's temporary directory named
// after its path, is put first on PATH. Nothing changes when python3 is
// not a shim or not installed.
package realpython

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// base holds one directory per interpreter, each with a python3 link.
func base() string { return filepath.Join(os.TempDir(), "pflow-test-python") }

// Use puts the interpreter behind a python3 shim first on this process's
// PATH, for the processes it starts. Call it from TestMain before any test
// runs. A child that inherits the PATH finds the link already first and
// asks nothing.
func Use() {
	found, err := exec.LookPath("python3")
	if err != nil || strings.HasPrefix(found, base()+string(filepath.Separator)) {
		return
	}
	cmd := exec.Command(found, "-c", "import sys; print(sys.executable)")
	cmd.Dir = os.TempDir() // a directory that pins no version (.python-version)
	out, err := cmd.Output()
	if err != nil {
		return
	}
	real := strings.TrimSpace(string(out))
	if !filepath.IsAbs(real) {
		return
	}
	if r, err := filepath.EvalSymlinks(found); err != nil || r == real || filepath.Dir(found) == filepath.Dir(real) {
		return // python3 is the interpreter (or a link to it), not a shim
	}
	sum := sha256.Sum256([]byte(real))
	dir := filepath.Join(base(), hex.EncodeToString(sum[:8]))
	link := filepath.Join(dir, "python3")
	if target, err := os.Readlink(link); err != nil || target != real {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return
		}
		// Made under another name and renamed: test processes running
		// at once never see a half-made link.
		tmp, err := os.MkdirTemp(dir, ".link")
		if err != nil {
			return
		}
		defer os.RemoveAll(tmp)
		if os.Symlink(real, filepath.Join(tmp, "python3")) != nil || os.Rename(filepath.Join(tmp, "python3"), link) != nil {
			return
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
