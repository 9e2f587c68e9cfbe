// Package pflowbin builds the real pflow binary for tests that run it as a
// process, once per version of the source: every test package of a
// `go test ./...` run (they are separate processes, run in parallel) shares
// one build instead of linking its own. Beside it are pflow-temporal,
// fakemcpd (the fake MCP server of internal/testutil/fakemcp) and loopwriterd
// (the writer the kill-mid-write tests kill). They are built
// as `go build` builds them, without the race detector: a process a test
// starts is the program a user runs (or, for the fake, scaffolding), and the
// race detector checks pflow's goroutines in the tests that run its code in
// process. The binaries live
// in the system's temporary directory, keyed by a digest of the module's Go
// sources, go.mod and go.sum; builds of older sources are removed after a
// day. Nothing is written into the checkout.
package pflowbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// Packages are the commands built, as `go build` is given them, pflow
// first; `make test` compiles the same list before the tests start, so that
// on an empty build cache the compiling is not done under go test's timeout.
var Packages = []string{"./cmd/pflow", "./cmd/pflow-temporal", "./internal/testutil/fakemcp/fakemcpd", "./internal/reliability/loopwriter/loopwriterd"}

var (
	once sync.Once
	path string
	err  error
)

// Path returns the path of a pflow binary built from the current sources,
// building it if no test process has yet. pflow-temporal is beside it.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() { path, err = build() })
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Command returns the path of the command name (the last element of one of
// Packages) built from the current sources.
func Command(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(filepath.Dir(Path(t)), name)
}

// FakeMCP returns the path of fakemcpd, the fake MCP server built from the
// current sources (internal/testutil/fakemcp/fakemcpd), building it (with
// pflow) if no test process has yet.
func FakeMCP() (string, error) {
	once.Do(func() { path, err = build() })
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(path), "fakemcpd"), nil
}

func build() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	sum, err := digest(root)
	if err != nil {
		return "", fmt.Errorf("pflowbin: %v", err)
	}
	base := filepath.Join(os.TempDir(), "pflow-test-bin")
	dir := filepath.Join(base, sum)
	bin := filepath.Join(dir, "pflow")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("pflowbin: %v", err)
	}
	// One builder per version: the others wait for it and reuse its binary.
	lock, err := fsutil.LockFile(context.Background(), dir, 10*time.Minute)
	if err != nil {
		return "", fmt.Errorf("pflowbin: %v", err)
	}
	defer lock.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// pflow-temporal (pflow with its Temporal engine) is built beside it:
	// pflow hands Temporal commands to the binary next to it.
	tmp := filepath.Join(dir, "tmp")
	os.RemoveAll(tmp)
	cmd := exec.Command("go", append([]string{"build", "-o", tmp + string(filepath.Separator)}, Packages...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", strings.Join(Packages, " "), err, out)
	}
	for i := len(Packages) - 1; i >= 0; i-- { // pflow last: it marks a complete build
		name := filepath.Base(Packages[i])
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("pflowbin: %v", err)
		}
	}
	os.RemoveAll(tmp)
	prune(base, sum)
	return bin, nil
}

// digest identifies the sources a build depends on: every file under cmd/
// and internal/ except tests and test data (embedded files such as the
// agent guides and the Python driver count), plus go.mod and go.sum.
func digest(root string) (string, error) {
	h := sha256.New()
	add := func(p string) error {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		return err
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		if err := add(filepath.Join(root, name)); err != nil {
			return "", err
		}
	}
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), "_test.go") || !d.Type().IsRegular() {
				return nil
			}
			return add(p)
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// prune removes builds of other versions older than a day.
func prune(base, keep string) {
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if e.Name() == keep || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 24*time.Hour {
			os.RemoveAll(filepath.Join(base, e.Name()))
			os.Remove(filepath.Join(base, e.Name()+".lock"))
		}
	}
}
