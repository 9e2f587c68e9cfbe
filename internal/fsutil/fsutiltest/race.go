// Package fsutiltest holds a test helper for code that shares a file between
// processes through fsutil.LockFile.
package fsutiltest

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// Race runs, all at once, n goroutines calling inProcess(i) and n copies of
// the test binary that run only the test named helperTest with env(i) added
// to their environment. It fails t with the first error or failing helper's
// output. The helper test must do nothing unless its environment is set.
func Race(t testing.TB, n int, helperTest string, env func(i int) []string, inProcess func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs <- inProcess(i)
		}()
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^"+helperTest+"$")
			cmd.Env = append(os.Environ(), env(i)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("helper process %s: %v: %s", helperTest, err, out)
				return
			}
			errs <- nil
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
