// Package stepcache is the step cache (see docs/decisions.md, "Recorded,
// resumable runs and the step cache"): the
// outputs of pure steps, keyed by node type and version ⊕ effective params ⊕
// input data (the key is computed by internal/runs), stored one file per
// entry under $PFLOW_HOME/cache/steps/ with an expiry time.
//
// Entries are written atomically (temp file + rename) but not fsynced: an
// entry lost in a power cut only costs a step run, and an entry that cannot
// be read is a miss. Concurrent writers of one key leave one of their
// (equivalent) entries.
package stepcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Store is the step cache directory.
type Store struct {
	Dir string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Open returns the cache at dir.
func Open(dir string) *Store { return &Store{Dir: dir} }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Entry is one cache file.
type Entry struct {
	Key      string    `json:"key"`
	NodeType string    `json:"node_type"`
	Step     string    `json:"step,omitempty"`
	Workflow string    `json:"workflow,omitempty"`
	Run      string    `json:"run,omitempty"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
	Action   string    `json:"action"`
	// Outputs are the step's outputs as JSON (kept exact: see internal/runs).
	Outputs json.RawMessage `json:"outputs"`
}

func validKey(k string) bool {
	if len(k) < 16 || len(k) > 128 {
		return false
	}
	for _, c := range k {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Store) path(key string) string { return filepath.Join(s.Dir, key[:2], key+".json") }

// Get returns a live entry's outputs and action. An expired entry is a miss
// (and is removed).
func (s *Store) Get(key string) ([]byte, string, bool) {
	if !validKey(key) {
		return nil, "", false
	}
	e, err := s.read(s.path(key))
	if err != nil {
		return nil, "", false
	}
	if !s.now().Before(e.Expires) {
		os.Remove(s.path(key))
		return nil, "", false
	}
	return e.Outputs, e.Action, true
}

func (s *Store) read(p string) (*Entry, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Put stores outputs under key for ttl. info may name the node type, step,
// workflow and run it came from.
func (s *Store) Put(key string, outputs []byte, action string, ttl time.Duration, info map[string]string) error {
	if !validKey(key) {
		return fmt.Errorf("invalid cache key %q", key)
	}
	now := s.now()
	e := Entry{Key: key, NodeType: info["node_type"], Step: info["step"], Workflow: info["workflow"], Run: info["run"],
		Created: now.UTC(), Expires: now.Add(ttl).UTC(), Action: action, Outputs: outputs}
	b, err := json.Marshal(&e)
	if err != nil {
		return err
	}
	p := s.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+key[:8]+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	return nil
}

// Info describes one entry for listings (without its outputs).
type Info struct {
	Key      string    `json:"key"`
	NodeType string    `json:"node_type"`
	Step     string    `json:"step,omitempty"`
	Workflow string    `json:"workflow,omitempty"`
	Run      string    `json:"run,omitempty"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
	Expired  bool      `json:"expired"`
	Bytes    int64     `json:"bytes"`
}

// List returns every entry, newest first.
func (s *Store) List() ([]Info, error) {
	out := []Info{}
	err := s.walk(func(p string, fi fs.FileInfo) {
		e, err := s.read(p)
		if err != nil {
			return
		}
		out = append(out, Info{Key: e.Key, NodeType: e.NodeType, Step: e.Step, Workflow: e.Workflow, Run: e.Run,
			Created: e.Created, Expires: e.Expires, Expired: !s.now().Before(e.Expires), Bytes: fi.Size()})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, err
}

// Clear removes entries: all of them, or only the expired ones. It returns
// how many it removed.
func (s *Store) Clear(expiredOnly bool) (int, error) {
	n := 0
	err := s.walk(func(p string, fi fs.FileInfo) {
		if expiredOnly {
			e, err := s.read(p)
			if err == nil && s.now().Before(e.Expires) {
				return
			}
		}
		if os.Remove(p) == nil {
			n++
		}
	})
	return n, err
}

func (s *Store) walk(fn func(p string, fi fs.FileInfo)) error {
	err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		fn(p, fi)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the step cache %s: %w", s.Dir, err)
	}
	return nil
}
