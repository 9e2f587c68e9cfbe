//go:build unix

package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// Geteuid is the user pflow's file access acts for (tests replace it).
var Geteuid = os.Geteuid

// PlantedLinkError is a path that goes through a symlink another user may
// have planted: one in a folder every user may write that has the sticky
// bit (/tmp), owned neither by the current user nor by the folder's owner.
// Linux refuses to follow such a link when fs.protected_symlinks is on;
// pflow refuses it whatever that setting, since it resolves links itself
// too. Its owner could point it at any of the user's files.
type PlantedLinkError struct {
	Link  string // the symlink
	Owner int    // its owner's uid
	Dir   string // the shared folder it is in
}

func (e *PlantedLinkError) Error() string {
	return fmt.Sprintf("the path goes through the symlink %s, which %s owns in %s, a folder every user may write: pflow does not follow another user's link there (they could point it at any of your files). Remove the link, or use a path in a folder only you can write",
		e.Link, ownerName(e.Owner), e.Dir)
}

// ResolveUnplanted returns path with its symlinks resolved as the kernel
// resolves them (the part that does not exist yet kept as written), or a
// *PlantedLinkError for the first link on the way that another user may
// have planted.
func ResolveUnplanted(path string) (string, error) {
	me := uint32(Geteuid())
	return ResolveLinks(path, func(link, dir string, info fs.FileInfo) error {
		return mayFollow(dir, link, info, me)
	})
}

// OpenUnplanted opens path for reading through ResolveUnplanted, and opens
// the resolved file without following a link in its last element: a file
// swapped for a link after the check is refused, not followed.
func OpenUnplanted(path string) (*os.File, error) {
	resolved, err := ResolveUnplanted(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil && isLoop(err) {
		return nil, fmt.Errorf("%s became a symlink while pflow opened it: %w", resolved, fs.ErrPermission)
	}
	return f, err
}

// ReadFileUnplanted reads the file at path as OpenUnplanted opens it.
func ReadFileUnplanted(path string) ([]byte, error) {
	f, err := OpenUnplanted(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// mayFollow applies the rule of Linux's fs.protected_symlinks to the link
// at path (info lst) in the resolved folder dir: a link in a sticky folder
// every user may write is followed only when it belongs to me or to the
// folder's owner.
func mayFollow(dir, path string, lst fs.FileInfo, me uint32) error {
	ls, ok := lst.Sys().(*syscall.Stat_t)
	if !ok || ls.Uid == me {
		return nil
	}
	dst, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	ds, ok := dst.Sys().(*syscall.Stat_t)
	if !ok || dst.Mode()&os.ModeSticky == 0 || dst.Mode().Perm()&0o002 == 0 || ds.Uid == ls.Uid {
		return nil
	}
	return &PlantedLinkError{Link: path, Owner: int(ls.Uid), Dir: dir}
}

// ownerName is uid's login name with the uid ("nobody (uid 65534)").
func ownerName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return fmt.Sprintf("%s (uid %s)", u.Username, id)
	}
	return "uid " + id
}
