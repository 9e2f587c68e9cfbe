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
// keyed by file size and modification time; a stale or unreadable cache is
// rebuilt. The cache is derived data: losing it costs time, never results.
type Index struct {
	Path string // e.g. $PFLOW_HOME/cache/discovery-workflows.idx
}

const indexHeader = "pflow-discovery-index v1"

type indexEntry struct {
	size, mtime int64
	doc         Prepared
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
		size, mtime := st.Size(), st.ModTime().UnixNano()
		if e, ok := cached[n]; ok && e.size == size && e.mtime == mtime {
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
		e := &indexEntry{size: size, mtime: mtime, doc: Prepare(WorkflowDoc(s))}
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
			size, e1 := strconv.ParseInt(parts[1], 10, 64)
			mtime, e2 := strconv.ParseInt(parts[2], 10, 64)
			if e1 != nil || e2 != nil {
				return map[string]*indexEntry{}
			}
			cur = &indexEntry{size: size, mtime: mtime, doc: Prepared{Name: parts[0]}}
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
		fmt.Fprintf(&b, "W %s\t%d\t%d\n", n, e.size, e.mtime)
		for _, f := range e.doc.Fields {
			fmt.Fprintf(&b, "F %s\t%s\t%s\n", strconv.FormatFloat(f.Weight, 'g', -1, 64), clean.Replace(f.Label), strings.Join(f.Terms, " "))
		}
	}
	// Best effort: a failed cache write only costs time on the next query.
	_ = fsutil.WriteFileAtomic(ix.Path, b.Bytes(), 0o644)
}
