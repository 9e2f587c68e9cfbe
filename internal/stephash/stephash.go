// Package stephash defines the one digest of a step's inputs that resuming a
// run and the step cache both compare (DESIGN D17): the effective params a
// node receives (templates resolved, values coerced, engine controls removed),
// the template values bound to a shell command's environment, and the
// directory relative paths resolve against.
//
// Digests are HMAC-SHA256 under a key kept outside the run records (one per
// $PFLOW_HOME), so a digest of params that hold a secret cannot be used to
// test guesses of the secret by someone who reads the records.
package stephash

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/value"
)

// Hasher computes keyed digests. It is safe for concurrent use.
type Hasher struct {
	key  []byte
	pool sync.Pool // *writer with a keyed HMAC, reset between uses
}

// New returns a Hasher for key (a nil key still gives stable digests, for
// tests).
func New(key []byte) *Hasher {
	h := &Hasher{key: append([]byte(nil), key...)}
	h.pool.New = func() any { return &writer{h: hmac.New(sha256.New, h.key)} }
	return h
}

// digest runs fn over a reset HMAC and returns the hex digest.
func (h *Hasher) digest(fn func(w *writer)) string {
	w := h.pool.Get().(*writer)
	w.h.Reset()
	fn(w)
	var sum [sha256.Size]byte
	out := hex.EncodeToString(w.h.Sum(sum[:0]))
	h.pool.Put(w)
	return out
}

// Value digests one canonical value.
func (h *Hasher) Value(v any) string {
	return h.digest(func(w *writer) { w.value(v) })
}

// Params digests what a node request carries: the effective params, the
// template values bound to environment variables (node.Request.TemplateEnv)
// and the workflow directory. Engine annotations that do not change what the
// node does are left out: "_<param>_source_line" (moving a step down the
// file must not make it a different step) and "__workflow_file__" (dir
// stands for it).
func (h *Hasher) Params(params map[string]any, templateEnv map[string]string, dir string) string {
	return h.digest(func(w *writer) {
		var buf [32]string
		keys := buf[:0]
		for k := range params {
			if ignoredParam(k) {
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.tag('P')
		w.uint(uint64(len(keys)))
		for _, k := range keys {
			w.str(k)
			w.value(params[k])
		}
		w.tag('E')
		w.uint(uint64(len(templateEnv)))
		for _, k := range value.SortedKeys(templateEnv) {
			w.str(k)
			w.str(templateEnv[k])
		}
		w.tag('D')
		w.str(dir)
	})
}

// Strings digests a list of strings (e.g. a definition's parts or a cache
// key's components), each length-prefixed so no two lists collide.
func (h *Hasher) Strings(parts ...string) string {
	return h.digest(func(w *writer) {
		w.uint(uint64(len(parts)))
		for _, p := range parts {
			w.str(p)
		}
	})
}

// ignoredParam reports params the digest leaves out (see Params).
func ignoredParam(k string) bool {
	if k == "__workflow_file__" {
		return true
	}
	return strings.HasPrefix(k, "_") && !strings.HasPrefix(k, "__") && strings.HasSuffix(k, "_source_line")
}

// writer feeds a type-tagged, length-prefixed encoding of canonical values
// into a hash: two different values never produce the same bytes, map keys
// are sorted, and int64 7 differs from float64 7.
type writer struct {
	h   hash.Hash
	buf [9]byte
	sc  []byte // scratch for strings (no allocation per string)
}

// write feeds s.
func (w *writer) write(s string) {
	if len(s) > 1<<16 {
		w.h.Write([]byte(s))
		return
	}
	w.sc = append(w.sc[:0], s...)
	w.h.Write(w.sc)
}

func (w *writer) tag(t byte) { w.buf[0] = t; w.h.Write(w.buf[:1]) }

func (w *writer) uint(u uint64) {
	binary.BigEndian.PutUint64(w.buf[:8], u)
	w.h.Write(w.buf[:8])
}

func (w *writer) str(s string) {
	w.uint(uint64(len(s)))
	w.write(s)
}

func (w *writer) value(v any) {
	switch x := v.(type) {
	case nil:
		w.tag('n')
	case bool:
		if x {
			w.tag('t')
		} else {
			w.tag('f')
		}
	case int64:
		w.tag('i')
		w.uint(uint64(x))
	case int:
		w.tag('i')
		w.uint(uint64(int64(x)))
	case float64:
		w.tag('d')
		w.uint(math.Float64bits(x))
	case string:
		w.tag('s')
		w.str(x)
	case []any:
		w.tag('l')
		w.uint(uint64(len(x)))
		for _, e := range x {
			w.value(e)
		}
	case map[string]any:
		w.tag('m')
		w.uint(uint64(len(x)))
		var buf [16]string
		keys := buf[:0]
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.str(k)
			w.value(x[k])
		}
	default:
		// Not a canonical value: digest its canonical form (Normalize
		// always returns one).
		w.tag('x')
		w.value(value.Normalize(x))
	}
}
