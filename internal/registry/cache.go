package registry

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

// The registry cache is a compact binary snapshot of registry.json without
// the MCP schemas, valid while registry.json has the same size, ctime and
// inode. It is derived data: a missing, stale or unreadable cache only costs
// a JSON decode. Format: magic, key (size, ctime (see stamp), inode), version, entries;
// strings are uvarint-length-prefixed; Default and Enum values are JSON.
const cacheMagic = "pflow-registry-cache-v8\n"

var errBadCache = errors.New("bad registry cache")

func (s *Store) cached(size, stamp int64, ino uint64) (*File, bool) {
	if s.CachePath == "" {
		return nil, false
	}
	data, err := os.ReadFile(s.CachePath)
	if err != nil {
		return nil, false
	}
	f, err := decodeCache(data, size, stamp, ino)
	if err != nil {
		return nil, false
	}
	return f, true
}

func (s *Store) writeCache(size, stamp int64, ino uint64, f *File) {
	if s.CachePath == "" {
		return
	}
	data := encodeCache(size, stamp, ino, f)
	_ = os.MkdirAll(filepath.Dir(s.CachePath), 0o700)
	_ = fsutil.WriteFileAtomic(s.CachePath, data, 0o600)
}

// inode returns the file's inode number (0 where unknown): an atomic
// replace always changes it, even within one mtime tick.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) strs(ss []string) {
	e.uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}
func (e *encoder) jsonValue(v any) {
	if v == nil {
		e.str("")
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.str("")
		return
	}
	e.str(string(b))
}

func (e *encoder) fields(fs []node.Field) {
	e.uvarint(uint64(len(fs)))
	for _, f := range fs {
		e.str(f.Key)
		e.str(f.Type)
		e.str(f.Description)
		if f.Required {
			e.uvarint(1)
		} else {
			e.uvarint(0)
		}
		e.jsonValue(f.Default)
		if f.Enum == nil {
			e.str("")
		} else {
			e.jsonValue(f.Enum)
		}
		e.fields(f.Structure)
		e.str(string(f.Sink))
	}
}

func encodeCache(size, stamp int64, ino uint64, f *File) []byte {
	e := &encoder{b: make([]byte, 0, 64+len(f.Nodes)*256)}
	e.b = append(e.b, cacheMagic...)
	e.varint(size)
	e.varint(stamp)
	e.uvarint(ino)
	e.str(f.Version)
	e.uvarint(uint64(len(f.Nodes)))
	for _, k := range value.SortedKeys(f.Nodes) {
		en := f.Nodes[k]
		e.str(k)
		e.str(en.ClassName)
		e.str(en.FilePath)
		e.str(en.Type)
		e.str(en.Kind)
		e.str(en.Group)
		e.str(en.Interface.Description)
		e.fields(en.Interface.Params)
		e.fields(en.Interface.Outputs)
		e.strs(en.Interface.Actions)
		extra := uint64(0)
		if en.Interface.ExtraParams {
			extra = 1
		}
		e.uvarint(extra)
		if en.MCP != nil {
			e.uvarint(1)
			e.str(en.MCP.Server)
			e.str(en.MCP.Tool)
			var hints uint64
			if h := en.MCP.Hints; h != nil {
				hints = 4
				if h.ReadOnly {
					hints |= 1
				}
				if h.Idempotent {
					hints |= 2
				}
				if h.Destructive != nil {
					hints |= 8
					if *h.Destructive {
						hints |= 16
					}
				}
				if h.OpenWorld != nil {
					hints |= 32
					if *h.OpenWorld {
						hints |= 64
					}
				}
			}
			e.uvarint(hints)
			e.str(en.MCP.SchemaHash)
			e.str(en.MCP.Protocol)
		} else {
			e.uvarint(0)
		}
	}
	return e.b
}

// decoder reads from one string so decoded strings share its memory (no
// allocation per string).
type decoder struct {
	s   string
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var v uint64
	for i := 0; i < len(d.s) && i < binary.MaxVarintLen64; i++ {
		c := d.s[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.s = d.s[i+1:]
			return v
		}
	}
	d.err = errBadCache
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)) {
		d.err = errBadCache
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.s)) { // every element takes at least one byte
		d.err = errBadCache
		return 0
	}
	return int(n)
}

func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 || d.err != nil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) jsonValue() any {
	s := d.str()
	if s == "" || d.err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		d.err = errBadCache
	}
	return v
}

func (d *decoder) fields(depth int) []node.Field {
	n := d.count()
	if n == 0 || d.err != nil || depth > 32 {
		if depth > 32 {
			d.err = errBadCache
		}
		return nil
	}
	out := make([]node.Field, n)
	for i := range out {
		f := &out[i]
		f.Key = d.str()
		f.Type = d.str()
		f.Description = d.str()
		f.Required = d.uvarint() == 1
		f.Default = d.jsonValue()
		if v := d.jsonValue(); v != nil {
			f.Enum, _ = v.([]any)
		}
		f.Structure = d.fields(depth + 1)
		f.Sink = node.Sink(d.str())
	}
	return out
}

func decodeCache(data []byte, size, stamp int64, ino uint64) (*File, error) {
	if len(data) < len(cacheMagic) || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errBadCache
	}
	d := &decoder{s: string(data[len(cacheMagic):])}
	if d.varint() != size || d.varint() != stamp || d.uvarint() != ino || d.err != nil {
		return nil, errBadCache
	}
	f := &File{Version: d.str()}
	n := d.count()
	f.Nodes = make(map[string]*Entry, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		e := &Entry{ClassName: d.str(), FilePath: d.str(), Type: d.str(), Kind: d.str(), Group: d.str()}
		e.Interface.Description = d.str()
		e.Interface.Params = d.fields(0)
		e.Interface.Outputs = d.fields(0)
		e.Interface.Actions = d.strs()
		e.Interface.ExtraParams = d.uvarint() == 1
		if d.uvarint() == 1 {
			e.MCP = &MCPInfo{Server: d.str(), Tool: d.str()}
			if h := d.uvarint(); h&4 != 0 {
				e.MCP.Hints = &MCPHints{ReadOnly: h&1 != 0, Idempotent: h&2 != 0}
				if h&8 != 0 {
					v := h&16 != 0
					e.MCP.Hints.Destructive = &v
				}
				if h&32 != 0 {
					v := h&64 != 0
					e.MCP.Hints.OpenWorld = &v
				}
			}
			e.MCP.SchemaHash = d.str()
			e.MCP.Protocol = d.str()
		}
		f.Nodes[k] = e
	}
	if d.err != nil || len(d.s) != 0 {
		return nil, errBadCache
	}
	return f, nil
}
