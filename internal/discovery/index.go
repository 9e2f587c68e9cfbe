package discovery

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/library"
)

// Index caches the prepared documents of saved workflows in a file so
// discovery does not re-parse every workflow on each query. Entries are
// keyed by the file's version (library.VersionOf: size, mtime, inode, ctime);
// a stale or unreadable cache is
// rebuilt. The cache is derived data: losing it costs time, never results.
type Index struct {
	Path string // e.g. $PFLOW_HOME/cache/discovery-workflows.idx
}

const indexHeader = "pflow-discovery-index v2"

type indexEntry struct {
	ver library.FileVersion
	doc Prepared
}

// Workflows returns the prepared documents of every saved workflow in lib,
// sorted by name. Workflows that fail to parse are skipped (as in List).
func (ix *Index) Workflows(lib *library.Library) ([]Prepared, error) {
	names, err := lib.Names()
	if err != nil {
		return nil, err
	}
	cached := ix.read()
	fresh := make(map[string]*indexEntry, len(names))
	out := make([]Prepared, 0, len(names))
	changed := len(cached) != len(names)
	for _, n := range names {
		st, err := os.Stat(lib.Path(n))
		if err != nil {
			changed = true
			continue
		}
		ver := library.VersionOf(st)
		if e, ok := cached[n]; ok && e.ver == ver {
			fresh[n] = e
			out = append(out, e.doc)
			continue
		}
		changed = true
		s, err := lib.Load(n)
		if err != nil {
			if lib.Log != nil {
				fmt.Fprintf(lib.Log, "Warning: skipping saved workflow '%s': %v\n", n, err)
			}
			continue
		}
		e := &indexEntry{ver: ver, doc: Prepare(WorkflowDoc(s))}
		fresh[n] = e
		out = append(out, e.doc)
	}
	if changed && ix.Path != "" {
		ix.write(names, fresh)
	}
	return out, nil
}

func (ix *Index) read() map[string]*indexEntry {
	out := map[string]*indexEntry{}
	if ix.Path == "" {
		return out
	}
	data, err := os.ReadFile(ix.Path)
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	if !sc.Scan() || sc.Text() != indexHeader {
		return map[string]*indexEntry{}
	}
	var cur *indexEntry
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			return map[string]*indexEntry{}
		}
		parts := strings.SplitN(line[2:], "\t", 3)
		if len(parts) != 3 {
			return map[string]*indexEntry{}
		}
		switch line[0] {
		case 'W':
			ver, ok := parseVersion(parts[1], parts[2])
			if !ok {
				return map[string]*indexEntry{}
			}
			cur = &indexEntry{ver: ver, doc: Prepared{Name: parts[0]}}
			out[parts[0]] = cur
		case 'F':
			w, err := strconv.ParseFloat(parts[0], 64)
			if err != nil || cur == nil {
				return map[string]*indexEntry{}
			}
			cur.doc.Fields = append(cur.doc.Fields, PreparedField{Label: parts[1], Weight: w, Terms: strings.Fields(parts[2])})
		default:
			return map[string]*indexEntry{}
		}
	}
	return out
}

func (ix *Index) write(names []string, es map[string]*indexEntry) {
	var b bytes.Buffer
	b.WriteString(indexHeader + "\n")
	clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	for _, n := range names {
		e, ok := es[n]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "W %s\t%d\t%d %d %d\n", n, e.ver.Size, e.ver.MTime, e.ver.CTime, e.ver.Ino)
		for _, f := range e.doc.Fields {
			fmt.Fprintf(&b, "F %s\t%s\t%s\n", strconv.FormatFloat(f.Weight, 'g', -1, 64), clean.Replace(f.Label), strings.Join(f.Terms, " "))
		}
	}
	// Best effort: a failed cache write only costs time on the next query.
	_ = fsutil.WriteFileAtomic(ix.Path, b.Bytes(), 0o600)
}

// parseVersion reads the "size" and "mtime ctime inode" fields of a W line.
func parseVersion(size, rest string) (library.FileVersion, bool) {
	f := strings.Fields(rest)
	if len(f) != 3 {
		return library.FileVersion{}, false
	}
	var v library.FileVersion
	var e [4]error
	v.Size, e[0] = strconv.ParseInt(size, 10, 64)
	v.MTime, e[1] = strconv.ParseInt(f[0], 10, 64)
	v.CTime, e[2] = strconv.ParseInt(f[1], 10, 64)
	v.Ino, e[3] = strconv.ParseUint(f[2], 10, 64)
	for _, err := range e {
		if err != nil {
			return library.FileVersion{}, false
		}
	}
	return v, true
}
