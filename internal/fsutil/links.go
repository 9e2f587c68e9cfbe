package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ResolveLinks returns path with its symlinks resolved as the kernel
// resolves them: one at a time, a relative target against the link's
// folder, a ".." after a link from the link's target (path is not cleaned
// first). The part that does not exist yet is kept as written. Each link
// on the way, and each it leads to, is shown to check (with the resolved
// folder it is in) before it is followed; check's error stops the walk. A
// loop or an unreadable link ends it with path as it is, left to the call
// that uses the path to report.
func ResolveLinks(path string, check func(link, dir string, info fs.FileInfo) error) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		wd, err := os.Getwd()
		if err != nil {
			return path, nil
		}
		abs = wd + string(filepath.Separator) + path
	}
	done := string(filepath.Separator)
	if v := filepath.VolumeName(abs); v != "" {
		done = v + done
		abs = abs[len(v):]
	}
	rest := splitPath(abs)
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		st, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > 255 {
			return path, nil
		}
		if check != nil {
			if err := check(next, done, st); err != nil {
				return "", err
			}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return path, nil
		}
		if filepath.IsAbs(target) {
			done = string(filepath.Separator)
			if v := filepath.VolumeName(target); v != "" {
				done = v + done
				target = target[len(v):]
			}
		}
		rest = append(splitPath(target), rest...)
	}
	return done, nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return os.IsPathSeparator(uint8(r)) })
}
