package trace

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
)

// Caps on what one trace file keeps (documented in docs/troubleshooting.md,
// "Traces"). Whatever a cap cuts is replaced by a string starting with
// Truncated that says what and how much.
const (
	// MaxDepth is how many levels of nesting a value keeps; a list or object
	// deeper than that is replaced by a marker.
	MaxDepth = 64
	// MaxString is how many bytes of a string are kept (after redaction).
	MaxString = 10_000
	// MaxItems is how many elements of a list, and keys of an object, are kept.
	MaxItems = 1_000
	// MaxNodes is how many steps (nested workflows' steps included) a trace lists.
	MaxNodes = 2_000
	// MaxFileBytes is the size a trace file never exceeds: values beyond it
	// are cut, the largest first, with a marker saying how much was left out.
	MaxFileBytes = 10 << 20
)

// Truncated starts every marker that stands for something a cap cut.
const Truncated = "<truncated"

// maxName caps identifier-like fields (node ids, types, statuses, paths),
// which are written outside the value budget.
const maxName = 1024

// limits are the caps one write applies (defaultLimits in production; tests
// use smaller ones to reach every cap cheaply).
type limits struct {
	depth, str, items, nodes int
	file                     int64
}

var defaultLimits = limits{depth: MaxDepth, str: MaxString, items: MaxItems, nodes: MaxNodes, file: MaxFileBytes}

// markerMax bounds the encoded size of a marker written when the size budget
// runs out ("<truncated>": "<truncated: N more keys (trace size limit)>").
const markerMax = 96

// encoder streams indented JSON (the layout of encoding/json's Encoder with
// SetIndent("", "  ") and no HTML escaping), counting what it writes, and
// writes values within the caps: redacted, cut at MaxDepth, MaxItems and
// MaxString, and within a byte budget per value ("slot").
type encoder struct {
	w     io.Writer // nil: only count
	n     int64
	err   error
	lvl   int    // open containers
	first []bool // per open container: no element yet
	buf   []byte // scratch for one scalar
	red   *redact.Redactor
	lim   limits
	// The current slot: a value written with a byte budget. The encoder
	// keeps n ≤ end while inside it, reserving at every open level room for
	// a marker and the closing bracket.
	end   int64
	start int64 // n at the slot's start
	need  int64 // the most the slot needed so far (see fits)
	base  int   // lvl at which the slot started
	full  bool  // the budget ran out: every open container marks and closes
	cut   bool  // a cap cut something in this write
}

func (e *encoder) write(b []byte) {
	e.n += int64(len(b))
	if e.w != nil && e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) writeString(s string) {
	e.n += int64(len(s))
	if e.w != nil && e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

const spaces = "                                                                                                                                "

func (e *encoder) newline(lvl int) {
	e.writeString("\n")
	for n := 2 * lvl; n > 0; {
		k := min(n, len(spaces))
		e.writeString(spaces[:k])
		n -= k
	}
}

// open starts an object ('{') or a list ('[').
func (e *encoder) open(c byte) {
	e.buf = append(e.buf[:0], c)
	e.write(e.buf)
	e.lvl++
	e.first = append(e.first, true)
}

// close ends the innermost container.
func (e *encoder) close(c byte) {
	empty := e.first[len(e.first)-1]
	e.first = e.first[:len(e.first)-1]
	e.lvl--
	if !empty {
		e.newline(e.lvl)
	}
	e.buf = append(e.buf[:0], c)
	e.write(e.buf)
}

// sep starts the next element of the innermost container.
func (e *encoder) sep() {
	i := len(e.first) - 1
	if !e.first[i] {
		e.writeString(",")
	}
	e.first[i] = false
	e.newline(e.lvl)
}

// sepLen is what sep will write.
func (e *encoder) sepLen() int64 {
	n := int64(1 + 2*e.lvl)
	if !e.first[len(e.first)-1] {
		n++
	}
	return n
}

// key starts an object member.
func (e *encoder) key(k string) {
	e.sep()
	e.buf = value.AppendJSONString(e.buf[:0], k)
	e.buf = append(e.buf, ':', ' ')
	e.write(e.buf)
}

// Fixed-layout helpers for the trace's own fields (outside any slot).

func (e *encoder) strField(k, v string) {
	e.key(k)
	v, cut := e.red.Prefix(v, maxName)
	if cut {
		v += "..."
	}
	e.buf = value.AppendJSONString(e.buf[:0], v)
	e.write(e.buf)
}

func (e *encoder) rawField(k string, raw []byte) {
	e.key(k)
	e.write(raw)
}

func (e *encoder) intField(k string, v int64) { e.rawField(k, strconv.AppendInt(nil, v, 10)) }

func (e *encoder) boolField(k string, v bool) { e.rawField(k, strconv.AppendBool(nil, v)) }

func (e *encoder) floatField(k string, v float64) {
	e.rawField(k, strconv.AppendFloat(nil, v, 'f', -1, 64))
}

// reserve is the room every open container of the slot, plus extra more
// levels, needs to mark a cut and close: a marker member and a closing
// bracket each.
func (e *encoder) reserve(extra int) int64 {
	var r int64
	for l := e.base + 1; l <= e.lvl+extra; l++ {
		r += markerMax + 2 + 2*int64(l) + // ",\n" + indent + marker
			1 + 2*int64(l-1) + 1 // "\n" + indent + bracket
	}
	return r
}

// fits reports whether cost more bytes, plus the reserve of the open
// containers (extra more levels), stay within the slot. It records the most
// the slot needed, so that a slot given that budget is written uncut.
func (e *encoder) fits(cost int64, extra int) bool {
	req := e.n + cost + e.reserve(extra)
	e.need = max(e.need, req-e.start)
	return req <= e.end
}

// slot writes v as the value of the member or element just started, within
// budget bytes (math.MaxInt64: no budget). It returns what it wrote and the
// budget it needed to write v without cutting anything for size.
func (e *encoder) slot(v any, budget int64) (wrote, need int64) {
	e.start, e.need = e.n, 0
	e.end, e.base, e.full = satAdd(e.n, budget), e.lvl, false
	v = canon(v)
	cost, container := e.valueCost(v)
	extra := 0
	if container {
		extra = 1
	}
	if e.fits(cost, extra) {
		e.value(v, 0)
	} else {
		e.cut, e.full = true, true
		e.buf = value.AppendJSONString(e.buf[:0], fmt.Sprintf("%s: trace size limit; %s left out>", Truncated, describe(v)))
		e.write(e.buf)
	}
	e.end = math.MaxInt64
	return e.n - e.start, max(e.need, e.n-e.start)
}

func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// canon maps v to pflow's value model (value.Normalize), leaving the
// slices and maps encode walks without a copy as they are.
func canon(v any) any {
	switch v.(type) {
	case nil, bool, string, int64, int, float64, []any, []string, []map[string]any, map[string]any:
		return v
	}
	n := value.Normalize(v)
	switch n.(type) {
	case nil, bool, string, int64, float64, []any, map[string]any:
		return n
	}
	return fmt.Sprint(n)
}

// describe names what a marker stands for.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "string of " + count(len(x), "byte")
	case []any:
		return "list of " + count(len(x), "item")
	case []string:
		return "list of " + count(len(x), "item")
	case []map[string]any:
		return "list of " + count(len(x), "item")
	case map[string]any:
		return "object of " + count(len(x), "key")
	}
	return "value"
}

// count is "1 key", "2 keys".
func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// value writes canonical v (at nesting depth d inside its slot) in place:
// the caller has written the separator and checked the cost (valueCost).
func (e *encoder) value(v any, d int) {
	switch x := v.(type) {
	case string:
		e.str(x)
	case []any:
		e.list(len(x), func(i int) any { return x[i] }, d)
	case []string:
		e.list(len(x), func(i int) any { return x[i] }, d)
	case []map[string]any:
		e.list(len(x), func(i int) any { return x[i] }, d)
	case map[string]any:
		e.object(x, d)
	default:
		e.write(e.scalar(x))
	}
}

// scalar encodes a canonical scalar (not a string) into e.buf.
func (e *encoder) scalar(v any) []byte {
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(e.buf[:0], x)
	case int64:
		return strconv.AppendInt(e.buf[:0], x, 10)
	case int:
		return strconv.AppendInt(e.buf[:0], int64(x), 10)
	case float64:
		return appendFloat(e.buf[:0], x)
	}
	return append(e.buf[:0], "null"...)
}

// valueCost is the least canonical v needs: the whole scalar, a string cut
// to a marker at worst (str shrinks a string to what fits), or a
// container's opening bracket (its elements check their own cost).
func (e *encoder) valueCost(v any) (cost int64, container bool) {
	switch x := v.(type) {
	case []any, []string, []map[string]any, map[string]any:
		return 1, true
	case string:
		return min(6*int64(len(x))+2, markerMax+2), false
	}
	return int64(len(e.scalar(v))), false
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return value.AppendJSONString(b, value.FormatFloat(f)) // not valid JSON numbers
	}
	j, err := json.Marshal(f)
	if err != nil {
		return value.AppendJSONString(b, value.FormatFloat(f))
	}
	return append(b, j...)
}

// str writes a string: redacted, cut at MaxString and, inside a slot, to
// what the budget leaves (valueCost guarantees room for the marker alone).
func (e *encoder) str(s string) {
	maxLen, shrunk := e.lim.str, false
	for {
		kept, cut := e.red.Prefix(s, maxLen)
		e.buf = value.AppendJSONString(e.buf[:0], kept)
		if cut {
			e.buf = e.buf[:len(e.buf)-1]
			e.buf = value.AppendJSONEscaped(e.buf, fmt.Sprintf("... %s: kept %d of %d bytes>", Truncated, len(kept), len(s)))
			e.buf = append(e.buf, '"')
		}
		if e.fits(int64(len(e.buf)), 0) || maxLen == 0 {
			e.cut = e.cut || cut
			e.write(e.buf)
			return
		}
		// Keep what the budget allows: first all of the room, then (when
		// escaping makes the text longer than the bytes kept) halve.
		room := e.end - e.n - e.reserve(0) - markerMax
		if int64(maxLen) > room && !shrunk {
			maxLen, shrunk = int(max(0, room)), true
		} else {
			maxLen = int(max(0, min(int64(maxLen/2), room)))
		}
	}
}

// depthMarker stands for a container nested deeper than MaxDepth.
func (e *encoder) depthMarker(what string) {
	e.cut = true
	e.buf = value.AppendJSONString(e.buf[:0], fmt.Sprintf("%s: deeper than %d levels; %s>", Truncated, e.lim.depth, what))
	e.write(e.buf)
}

// elemFits checks that element v (after a key of keyLen bytes) can start.
func (e *encoder) elemFits(v any, keyLen int) bool {
	cost, container := e.valueCost(v)
	extra := 0
	if container {
		extra = 1
	}
	return e.fits(e.sepLen()+int64(keyLen)+cost, extra)
}

func (e *encoder) list(n int, at func(int) any, d int) {
	if d >= e.lim.depth {
		e.depthMarker("list of " + count(n, "item"))
		return
	}
	e.open('[')
	for i := 0; i < n; i++ {
		if i == e.lim.items {
			e.cut = true
			e.sep()
			e.buf = value.AppendJSONString(e.buf[:0], fmt.Sprintf("%s: %s>", Truncated, count(n-i, "more item")))
			e.write(e.buf)
			break
		}
		v := canon(at(i))
		if e.full || !e.elemFits(v, 0) {
			e.cut, e.full = true, true
			e.sep()
			e.buf = value.AppendJSONString(e.buf[:0], fmt.Sprintf("%s: %s (trace size limit)>", Truncated, count(n-i, "more item")))
			e.write(e.buf)
			break
		}
		e.sep()
		e.value(v, d+1)
	}
	e.close(']')
}

func (e *encoder) object(m map[string]any, d int) {
	if d >= e.lim.depth {
		e.depthMarker("object of " + count(len(m), "key"))
		return
	}
	keys := smallestKeys(m, e.lim.items)
	e.open('{')
	for i, k := range keys {
		v := any(redact.Redacted)
		if !e.red.HidesKey(k, m[k]) {
			v = canon(m[k])
		}
		rk, _ := e.red.Prefix(k, maxName)
		ek := value.AppendJSONString(nil, rk)
		if e.full || !e.elemFits(v, len(ek)+2) {
			e.cut, e.full = true, true
			e.key(Truncated + ">")
			e.buf = value.AppendJSONString(e.buf[:0], fmt.Sprintf("%s: %s (trace size limit)>", Truncated, count(len(m)-i, "more key")))
			e.write(e.buf)
			e.close('}')
			return
		}
		e.sep()
		e.write(ek)
		e.writeString(": ")
		e.value(v, d+1)
	}
	if len(m) > len(keys) {
		e.cut = true
		e.key(Truncated + ">")
		e.buf = value.AppendJSONString(e.buf[:0], fmt.Sprintf("%s: %s>", Truncated, count(len(m)-len(keys), "more key")))
		e.write(e.buf)
	}
	e.close('}')
}

// smallestKeys returns the (at most) k smallest keys of m, sorted, in O(k)
// memory: a map with a million keys is not sorted whole to keep a thousand.
func smallestKeys(m map[string]any, k int) []string {
	if len(m) <= k {
		return value.SortedKeys(m)
	}
	h := &maxHeap{}
	for key := range m {
		if h.Len() < k {
			heap.Push(h, key)
		} else if k > 0 && key < (*h)[0] {
			(*h)[0] = key
			heap.Fix(h, 0)
		}
	}
	keys := []string(*h)
	sort.Strings(keys)
	return keys
}

type maxHeap []string

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
