//go:build unix

package home

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
)

// geteuid is the user the home must belong to (replaceable by tests).
var geteuid = os.Geteuid

// Check refuses a home that is not the current user's alone: one owned by
// another user, or that its group or others may write. Such a home lets
// another user of the machine change the workflows, settings, MCP servers
// and registry pflow runs from, and read the traces, run records and
// sign-ins it keeps. So is a home reached through a symlink another user
// (not root) owns. A home that does not exist yet is accepted: pflow
// creates it, and everything in it, for its user only (0700).
func Check(p Paths) error {
	me := geteuid()
	// A link another user owns on the way to the home lets them point it
	// at a directory of theirs between this check and the reads after it.
	_, err := fsutil.ResolveLinks(p.Root, func(link, _ string, info fs.FileInfo) error {
		if sys, ok := info.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != me && sys.Uid != 0 {
			return &pferr.Error{Kind: pferr.Security,
				Message: fmt.Sprintf("pflow's home %s is reached through the symlink %s, which belongs to %s, not to you (%s): they could point it at a directory of theirs, with the workflows, settings and MCP servers pflow runs", p.Root, link, userName(int(sys.Uid)), userName(me)),
				Hint:    "Set PFLOW_HOME to the directory itself, not to another user's link (e.g. export PFLOW_HOME=$HOME/.pflow).",
				Details: map[string]any{"directory": p.Root, "symlink": link, "owner_uid": int(sys.Uid)}}
		}
		return nil
	})
	if err != nil {
		return err
	}
	st, err := os.Stat(p.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return nil // reported, with its fix, by the first read or write
	}
	if !st.IsDir() {
		return &pferr.Error{Kind: pferr.Config,
			Message: fmt.Sprintf("pflow's home %s is not a directory", p.Root),
			Hint:    fmt.Sprintf("Remove %s, or set PFLOW_HOME to a directory you own (e.g. export PFLOW_HOME=$HOME/.pflow).", p.Root),
			Details: map[string]any{"directory": p.Root}}
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	mode := st.Mode().Perm()
	owner := int(sys.Uid)
	details := map[string]any{"directory": p.Root, "owner_uid": owner, "mode": fmt.Sprintf("%04o", mode)}
	if owner != me {
		return &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("pflow's home %s belongs to %s, not to you (%s): another user could change the workflows, settings and MCP servers pflow runs", p.Root, userName(owner), userName(me)),
			Hint:    "Set PFLOW_HOME to a directory you own (e.g. export PFLOW_HOME=$HOME/.pflow), never one in a shared folder such as /tmp.",
			Details: details}
	}
	if mode&0o022 != 0 {
		who := "its group"
		switch {
		case mode&0o002 != 0 && mode&0o020 != 0:
			who = "its group and every user"
		case mode&0o002 != 0:
			who = "every user"
		}
		return &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("pflow's home %s is writable by %s (mode %04o): another user could change the workflows, settings and MCP servers pflow runs", p.Root, who, mode),
			Hint:    fmt.Sprintf("Make it yours alone: chmod 700 %s (or set PFLOW_HOME to a directory you own).", p.Root),
			Details: details}
	}
	return nil
}

// userName is uid's login name with the uid ("nobody (uid 65534)"), or the
// uid alone when it has no name.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return fmt.Sprintf("%s (uid %s)", u.Username, id)
	}
	return "uid " + id
}
