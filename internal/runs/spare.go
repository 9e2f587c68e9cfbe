package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// Spare run directories.
//
// Making a file or a directory costs about 0.3 ms of kernel time on some
// file systems (measured on ext4 on the CI machine, where opening an
// existing file costs 5 µs and a rename 14 µs), and a run's record needs a
// directory and six files: two milliseconds, which is most of what
// recording a quick run costs. So a run's record is made in a spare
// directory when one is there: a directory holding the record's files,
// empty, under a hidden name (.spare-1 … .spare-8), which a run claims with
// one rename and fills (truncating its files).
//
// Spares come from retention: it turns the directory of a run it removes
// into a spare, its files emptied (the old run's data is gone as when the
// directory is deleted), instead of deleting it — so in the steady state,
// once a store holds as many runs as it keeps, every run re-uses the
// directory of the run it replaces and no file is made at all. A
// long-lived process (pflow mcp serve) goes further: after answering, it
// makes its next run's directory ready, in a spare when there is one (see
// Standby).
//
// A spare never holds a run.json (it is renamed away first when a run's
// directory is recycled), so a spare, or a crash at any point of making or
// claiming one, never shows as a run: readers list only directories named
// like run ids that hold a run.json.

// SpareSlots is how many spares a store keeps: a long-lived process
// prunes its runs in batches of up to that many (pflow mcp serve), whose
// directories all become the next runs'.
const SpareSlots = 8

// spareFiles are the files a spare may hold, empty: those setup makes (a
// recycled directory has those its run had).
var spareFiles = []string{lockBase + ".lock", irFile, sourceFile, stepsFile, metaTemp, statusTemp}

// metaTemp is run.json while the run is being prepared (empty).
const metaTemp = "." + metaFile + ".tmp"

func (s *Store) spare(i int) string { return filepath.Join(s.Dir, fmt.Sprintf(".spare-%d", i)) }

// claimSpare moves a spare to dir (a run's new directory) and reports
// whether there was one.
func (s *Store) claimSpare(dir string) bool {
	for i := 1; i <= SpareSlots; i++ {
		if err := os.Rename(s.spare(i), dir); err == nil {
			return true
		}
	}
	return false
}

// freeSlot returns a spare slot that is empty, or 0.
func (s *Store) freeSlot() int {
	for i := 1; i <= SpareSlots; i++ {
		if _, err := os.Lstat(s.spare(i)); errors.Is(err, fs.ErrNotExist) {
			return i
		}
	}
	return 0
}

// place renames dir, a complete spare, into a free slot; false when every
// slot is taken (another process may have filled one meanwhile).
func (s *Store) place(dir string) bool {
	for i := 1; i <= SpareSlots; i++ {
		if _, err := os.Lstat(s.spare(i)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// A rename onto a directory that is not empty fails, onto an empty
		// one replaces it: a slot is never an empty directory.
		if os.Rename(dir, s.spare(i)) == nil {
			return true
		}
	}
	return false
}

// recycle turns the directory of run id, which retention removes (its
// lock held by the caller), into a spare: run.json and status.json are
// renamed to the names setup gives them while a run is prepared (from the
// first rename on the directory is no longer a run), every file is
// emptied, and the directory takes a free slot. It reports false when no
// slot is free or the directory does not hold a record's files as setup
// makes them; the caller then deletes the directory, as it would have.
func (s *Store) recycle(id string) bool {
	if s.freeSlot() == 0 {
		return false
	}
	dir := s.dir(id)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return false
		}
		have[e.Name()] = true
	}
	if !have[metaFile] || !have[lockBase+".lock"] || !have[stepsFile] {
		return false
	}
	if err := os.Rename(filepath.Join(dir, metaFile), filepath.Join(dir, metaTemp)); err != nil {
		return false
	}
	delete(have, metaFile)
	have[metaTemp] = true
	if have[statusFile] {
		if os.Rename(filepath.Join(dir, statusFile), filepath.Join(dir, statusTemp)) == nil {
			delete(have, statusFile)
			have[statusTemp] = true
		}
	}
	keep := map[string]bool{}
	for _, name := range spareFiles {
		keep[name] = true
	}
	for name := range have {
		p := filepath.Join(dir, name)
		if !keep[name] {
			if os.Remove(p) != nil {
				return false
			}
			continue
		}
		if name != lockBase+".lock" && fsutil.EmptyFile(p) != nil {
			return false
		}
	}
	// A file the run did not have (workflow text, status) is made by the
	// run that claims the spare, if it needs one.
	return s.place(dir)
}

// staleSpare is how old a standby must be before retention may remove
// it (its lock free: the process that made it is gone; see Standby).
const staleSpare = 10 * time.Minute
