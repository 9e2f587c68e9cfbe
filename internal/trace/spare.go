package trace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// Spare trace files.
//
// Making a file costs about 0.3 ms of kernel time on some file systems
// (ext4 on the CI machine, where opening an existing one costs 5 µs and a
// rename 14 µs), more than encoding a trace. So once the trace directory
// holds as many traces as retention keeps, the files retention removes are
// emptied (their content is gone, as when deleted) and kept under a hidden
// name (.trace-spare-1 … -8), and the next trace is written into one: a
// rename to its temp name, a write, and a rename into place, as any trace.

// spareSlots is how many spare trace files a directory keeps.
const spareSlots = 8

func spareName(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf(".trace-spare-%d", i))
}

// Recycler returns a retention.Policy.Recycle function for the trace
// directory dir: it empties a trace retention removes and keeps it as a
// spare when a slot is free (false: the caller deletes it).
func Recycler(dir string) func(path string) bool {
	return func(path string) bool {
		for i := 1; i <= spareSlots; i++ {
			spare := spareName(dir, i)
			if _, err := os.Lstat(spare); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if fsutil.EmptyFile(path) != nil {
				return false
			}
			return os.Rename(path, spare) == nil
		}
		return false
	}
}

// createInSpare writes path as fsutil.CreateFunc does (a temp file renamed
// into place, not flushed), in a spare of its directory; handled is false
// when there is none (nothing was done).
func createInSpare(path string, write func(io.Writer) error) (handled bool, err error) {
	dir := filepath.Dir(path)
	var b [6]byte
	rand.Read(b[:])
	tmp := filepath.Join(dir, "."+filepath.Base(path)+"."+hex.EncodeToString(b[:])+".tmp")
	claimed := false
	for i := 1; i <= spareSlots && !claimed; i++ {
		claimed = os.Rename(spareName(dir, i), tmp) == nil
	}
	if !claimed {
		return false, nil
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	f, err := os.OpenFile(tmp, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return true, fmt.Errorf("write %s: %w", path, err)
	}
	if st, serr := f.Stat(); serr != nil || st.Size() != 0 || !st.Mode().IsRegular() {
		f.Close()
		return false, nil // not a spare as Recycler leaves them: made anew
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		return true, fmt.Errorf("write %s: %w", path, werr)
	}
	ok = true
	return true, nil
}
