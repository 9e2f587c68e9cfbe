//go:build unix

package file

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// geteuid is the user the file steps act for (replaceable by tests).
var geteuid = os.Geteuid

// PlantedLinkError is a path that goes through a symlink another user may
// have planted: one in a folder every user may write that has the sticky
// bit (/tmp), owned neither by the current user nor by the folder's owner.
// Linux refuses to follow such a link when fs.protected_symlinks is on;
// the file steps refuse it whatever that setting, since they resolve links
// themselves too. Its owner could point it at any of the user's files.
type PlantedLinkError struct {
	Link  string // the symlink
	Owner int    // its owner's uid
	Dir   string // the shared folder it is in
}

func (e *PlantedLinkError) Error() string {
	return fmt.Sprintf("the path goes through the symlink %s, which %s owns in %s, a folder every user may write: pflow does not follow another user's link there (they could point it at any of your files). Remove the link, or use a path in a folder only you can write",
		e.Link, ownerName(e.Owner), e.Dir)
}

// resolveLinks returns path with its symlinks resolved as the kernel
// resolves them (the part that does not exist yet kept as written), or a
// *PlantedLinkError for the first link on the way that another user may
// have planted.
func resolveLinks(path string) (string, error) {
	me := uint32(geteuid())
	return fsutil.ResolveLinks(path, func(link, dir string, info fs.FileInfo) error {
		return mayFollow(dir, link, info, me)
	})
}

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
