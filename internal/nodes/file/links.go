package file

import "github.com/pflow-go/pflow/internal/fsutil"

// resolveLinks is fsutil.ResolveUnplanted: a path through a symlink another
// user may have planted in a shared sticky folder is refused.
func resolveLinks(path string) (string, error) { return fsutil.ResolveUnplanted(path) }
