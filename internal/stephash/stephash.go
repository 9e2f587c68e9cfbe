// Package stephash defines the one digest of a step's inputs that resuming a
// run and the step cache both compare (see docs/decisions.md, "Recorded,
// resumable runs and the step cache"): the effective params a
// node receives (templates resolved, values coerced, engine controls removed),
// the template values bound to a shell command's environment, and the
// directory relative paths resolve against.
//
// Digests are keyed, under a key kept outside the run records (one per
// $PFLOW_HOME), so a digest of params that hold a secret cannot be used to
// test guesses of the secret by someone who reads the records. They are
// SipHash-2-4 with a 128-bit output (32 hex digits), a keyed PRF made for
// short inputs, several times cheaper than HMAC-SHA256 on a step's params:
// a run digests every step and batch item. Records written before used
// HMAC-SHA256 (64 hex digits); For picks the Hasher that computes digests
// comparable with a recorded one, so those records still resume.
package stephash

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/value"
)

// Hasher computes keyed digests. It is safe for concurrent use.
type Hasher struct {
	key    []byte
	legacy bool      // HMAC-SHA256 (records of earlier builds)
	pool   sync.Pool // *writer with a keyed hash, reset between uses
	// old is the legacy Hasher of the same key (see Legacy).
	oldOnce sync.Once
	old     *Hasher
}

// New returns a Hasher for key (a nil key still gives stable digests, for
// tests).
func New(key []byte) *Hasher {
	h := &Hasher{key: append([]byte(nil), key...)}
	// The SipHash key is derived from the store's key, for this use only.
	mac := hmac.New(sha256.New, h.key)
	mac.Write([]byte("pflow stephash siphash-2-4-128"))
	var sk [16]byte
	copy(sk[:], mac.Sum(nil))
	h.pool.New = func() any { return &writer{h: newSip128(sk)} }
	return h
}

// Legacy returns the Hasher of the same key computing the digests of
// earlier builds (HMAC-SHA256), to compare with records they wrote.
func (h *Hasher) Legacy() *Hasher {
	if h.legacy {
		return h
	}
	h.oldOnce.Do(func() {
		old := &Hasher{key: h.key, legacy: true}
		old.pool.New = func() any { return &writer{h: hmac.New(sha256.New, old.key)} }
		h.old = old
	})
	return h.old
}

// For returns the Hasher whose digests compare with recorded, a digest
// read from a record: Legacy for one of an earlier build (64 hex digits),
// else h.
func (h *Hasher) For(recorded string) *Hasher {
	if len(recorded) == 2*sha256.Size {
		return h.Legacy()
	}
	return h
}

// get returns a writer with a reset hash and an empty buffer.
func (h *Hasher) get() *writer {
	w := h.pool.Get().(*writer)
	w.h.Reset()
	w.buf = w.buf[:0]
	return w
}

// appendHex appends the hex digest of what w encoded to dst, and puts w
// back in the pool.
func (h *Hasher) appendHex(dst []byte, w *writer) []byte {
	w.flush()
	sum := w.h.Sum(w.sum[:0]) // w.sum: a local array would escape
	n := len(dst)
	dst = slices.Grow(dst, 2*len(sum))[:n+2*len(sum)]
	hex.Encode(dst[n:], sum)
	if cap(w.buf) > 2*flushAt {
		w.buf = nil
	}
	clear(w.keys[:cap(w.keys)]) // keep no strings alive
	w.keys = w.keys[:0]
	h.pool.Put(w)
	return dst
}

// hex returns the hex digest of what w encoded.
func (h *Hasher) hex(w *writer) string {
	var out [2 * sha256.Size]byte
	return string(h.appendHex(out[:0], w))
}

// Value digests one canonical value.
func (h *Hasher) Value(v any) string {
	w := h.get()
	w.value(v)
	return h.hex(w)
}

// Definition digests a step as written: it equals Value of
// {"type": nodeType, "params": params, "input_mappings": inputMappings}
// (input_mappings left out when empty), without building that map.
func (h *Hasher) Definition(nodeType string, params map[string]any, inputMappings map[string]string) string {
	w := h.get()
	w.tag('m')
	if len(inputMappings) > 0 {
		w.uint(3)
		w.str("input_mappings")
		w.tag('m')
		w.uint(uint64(len(inputMappings)))
		start := len(w.keys)
		for k := range inputMappings {
			w.keys = append(w.keys, k)
		}
		keys := w.keys[start:]
		slices.Sort(keys)
		for _, k := range keys {
			w.str(k)
			w.tag('s')
			w.str(inputMappings[k])
		}
		w.keys = w.keys[:start]
	} else {
		w.uint(2)
	}
	w.str("params")
	w.value(params)
	w.str("type")
	w.tag('s')
	w.str(nodeType)
	return h.hex(w)
}

// Params digests what a node request carries: the effective params, the
// template values bound to environment variables (node.Request.TemplateEnv)
// and the workflow directory. The engine no longer puts annotations in the
// params (source lines and the workflow file are typed fields of the node
// request), but the params of records made by earlier builds carry
// "_<param>_source_line" and "__workflow_file__": they are left out, so those
// records still resume.
func (h *Hasher) Params(params map[string]any, templateEnv map[string]string, dir string) string {
	w := h.get()
	w.params(params, templateEnv, dir)
	return h.hex(w)
}

// AppendParams appends the hex digest Params returns to dst.
func (h *Hasher) AppendParams(dst []byte, params map[string]any, templateEnv map[string]string, dir string) []byte {
	w := h.get()
	w.params(params, templateEnv, dir)
	return h.appendHex(dst, w)
}

// Strings digests a list of strings (e.g. a definition's parts or a cache
// key's components), each length-prefixed so no two lists collide.
func (h *Hasher) Strings(parts ...string) string {
	w := h.get()
	w.uint(uint64(len(parts)))
	for _, p := range parts {
		w.str(p)
	}
	return h.hex(w)
}

// ignoredParam reports params the digest leaves out (see Params).
func ignoredParam(k string) bool {
	if k == "__workflow_file__" {
		return true
	}
	return strings.HasPrefix(k, "_") && !strings.HasPrefix(k, "__") && strings.HasSuffix(k, "_source_line")
}

// flushAt is how many encoded bytes the writer collects before feeding the
// hash (one Write per flushAt bytes instead of one per field).
const flushAt = 8 << 10

// writer encodes canonical values for a hash: two different values never
// produce the same bytes (type-tagged, length-prefixed), map keys are
// sorted, and int64 7 differs from float64 7. The bytes are collected in buf
// and fed to the hash in large writes.
type writer struct {
	h    hash.Hash
	buf  []byte
	keys []string // sorted map keys, a stack shared by nested maps
	sum  [sha256.Size]byte
}

// flush feeds the collected bytes to the hash.
func (w *writer) flush() {
	if len(w.buf) > 0 {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *writer) tag(t byte) { w.buf = append(w.buf, t) }

func (w *writer) uint(u uint64) { w.buf = binary.BigEndian.AppendUint64(w.buf, u) }

func (w *writer) str(s string) {
	w.uint(uint64(len(s)))
	for len(s) > 0 {
		if len(w.buf) >= flushAt {
			w.flush()
		}
		n := min(len(s), flushAt)
		w.buf = append(w.buf, s[:n]...)
		s = s[n:]
	}
	if len(w.buf) >= flushAt {
		w.flush()
	}
}

// params is Params' encoding.
func (w *writer) params(params map[string]any, templateEnv map[string]string, dir string) {
	start := len(w.keys)
	for k := range params {
		if !ignoredParam(k) {
			w.keys = append(w.keys, k)
		}
	}
	keys := w.keys[start:]
	slices.Sort(keys)
	w.tag('P')
	w.uint(uint64(len(keys)))
	for _, k := range keys {
		w.str(k)
		w.value(params[k])
	}
	w.keys = w.keys[:start]
	w.tag('E')
	w.uint(uint64(len(templateEnv)))
	for k := range templateEnv {
		w.keys = append(w.keys, k)
	}
	keys = w.keys[start:]
	slices.Sort(keys)
	for _, k := range keys {
		w.str(k)
		w.str(templateEnv[k])
	}
	w.keys = w.keys[:start]
	w.tag('D')
	w.str(dir)
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
		start := len(w.keys)
		for k := range x {
			w.keys = append(w.keys, k)
		}
		keys := w.keys[start:]
		slices.Sort(keys)
		for _, k := range keys {
			w.str(k)
			w.value(x[k])
		}
		w.keys = w.keys[:start]
	default:
		// Not a canonical value: digest its canonical form (Normalize
		// always returns one).
		w.tag('x')
		w.value(value.Normalize(x))
	}
}
