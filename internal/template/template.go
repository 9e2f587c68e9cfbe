// Package template implements pflow's ${...} template variables: parsing,
// reference extraction (for static validation), path traversal with JSON
// auto-parse, and type-preserving resolution (for the runtime).
//
// Grammar (as in the Python pflow):
//
//	template := "${" path "}"
//	path     := ident index* ( "." ident index* )*
//	ident    := [A-Za-z_][A-Za-z0-9_-]*
//	index    := "[" digits "]" | "[" "${" path "}" "]"   (nested index, one level)
//
// "$${x}" is an escape: it renders as the literal text "${x}" and is never a
// reference. A "${...}" that does not match the grammar (shell forms such as
// ${VAR:-default} or ${#arr}) is not a template and is left as it is.
package template

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pflow-go/pflow/internal/value"
)

// Segment is one step of a path after its head: a key (".name"), a fixed
// index ("[0]") or a dynamic index ("[${inner}]"). For a dynamic index
// IsIndex is true and Key holds the inner path (e.g. "__index__").
type Segment struct {
	Key     string
	Index   int
	IsIndex bool
}

// Dynamic reports whether s is a nested-template index like [${__index__}].
func (s Segment) Dynamic() bool { return s.IsIndex && s.Key != "" }

// String renders the segment as it appears in a path (".key", "[0]", "[${i}]").
func (s Segment) String() string {
	switch {
	case s.Dynamic():
		return "[${" + s.Key + "}]"
	case s.IsIndex:
		return "[" + strconv.Itoa(s.Index) + "]"
	default:
		return "." + s.Key
	}
}

// Ref is one template reference found in a string.
type Ref struct {
	Raw      string // "${a.b[0]}"
	Path     string // "a.b[0]"
	Head     string // "a"
	Segments []Segment
	// Start and End are byte offsets of Raw in the scanned string.
	Start, End int
	// Nested is true for the inner reference of a nested index
	// (the "${i}" in "${a[${i}]}").
	Nested bool
}

// JoinPath renders head and segments back into a path string.
func JoinPath(head string, segs []Segment) string {
	var b strings.Builder
	b.WriteString(head)
	for _, s := range segs {
		b.WriteString(s.String())
	}
	return b.String()
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c == '-' || (c >= '0' && c <= '9')
}

// scanIdent returns the end of an identifier starting at i, or -1.
func scanIdent(s string, i int) int {
	if i >= len(s) || !isIdentStart(s[i]) {
		return -1
	}
	i++
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	return i
}

// parser walks a path and reports segments through callbacks. It is shared by
// reference extraction (which records segments) and resolution (which
// traverses values) so the two can never disagree about the grammar.
type pathVisitor interface {
	head(name string)
	key(name string)
	index(n int)
	// dynamic is called for a nested index; start/end delimit the inner path.
	dynamic(s string, start, end int)
}

// scanPath parses a path starting at i (just after "${"), allowing nested
// indices when nested is true. It returns the index just past the closing
// "}" and true, or false when the text is not a template.
func scanPath(s string, i int, nested bool, v pathVisitor) (int, bool) {
	e := scanIdent(s, i)
	if e < 0 {
		return 0, false
	}
	if v != nil {
		v.head(s[i:e])
	}
	i = e
	for i < len(s) {
		switch s[i] {
		case '}':
			return i + 1, true
		case '.':
			e := scanIdent(s, i+1)
			if e < 0 {
				return 0, false
			}
			if v != nil {
				v.key(s[i+1 : e])
			}
			i = e
		case '[':
			j := i + 1
			if nested && strings.HasPrefix(s[j:], "${") {
				end, ok := scanPath(s, j+2, false, nil)
				if !ok || end >= len(s) || s[end] != ']' {
					return 0, false
				}
				if v != nil {
					v.dynamic(s, j+2, end-1)
				}
				i = end + 1
				continue
			}
			k := j
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k == j || k >= len(s) || s[k] != ']' || k-j > 9 {
				return 0, false
			}
			if v != nil {
				n, _ := strconv.Atoi(s[j:k])
				v.index(n)
			}
			i = k + 1
		default:
			return 0, false
		}
	}
	return 0, false
}

type segRecorder struct {
	headName string
	segs     []Segment
}

func (r *segRecorder) head(name string) { r.headName = name }
func (r *segRecorder) key(name string)  { r.segs = append(r.segs, Segment{Key: name}) }
func (r *segRecorder) index(n int)      { r.segs = append(r.segs, Segment{Index: n, IsIndex: true}) }
func (r *segRecorder) dynamic(s string, start, end int) {
	r.segs = append(r.segs, Segment{Key: s[start:end], IsIndex: true})
}

// escapedAt reports whether the "${" at j is the escape "$${".
func escapedAt(s string, j int) bool { return j > 0 && s[j-1] == '$' }

// Refs returns every reference in s, in order of appearance. Escaped "$${...}"
// and text that does not match the grammar are skipped. The inner reference of
// a nested index follows its outer reference and has Nested set.
func Refs(s string) []Ref {
	var out []Ref
	if n := strings.Count(s, "${"); n > 0 {
		out = make([]Ref, 0, n) // one allocation: a string cannot hold more refs than "${"
	}
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		if escapedAt(s, j) {
			i = j + 2
			continue
		}
		var rec segRecorder
		end, ok := scanPath(s, j+2, true, &rec)
		if !ok {
			i = j + 2
			continue
		}
		out = append(out, Ref{Raw: s[j:end], Path: s[j+2 : end-1], Head: rec.headName, Segments: rec.segs, Start: j, End: end})
		// Inner references of dynamic indices.
		for k := j + 2; k < end-1; k++ {
			if s[k] == '$' && s[k+1] == '{' {
				var in segRecorder
				iend, ok := scanPath(s, k+2, false, &in)
				if ok {
					out = append(out, Ref{Raw: s[k:iend], Path: s[k+2 : iend-1], Head: in.headName, Segments: in.segs, Start: k, End: iend, Nested: true})
					k = iend - 1
				}
			}
		}
		i = end
	}
	return out
}

// IsSimple reports whether s is exactly one template "${...}" and returns it.
func IsSimple(s string) (Ref, bool) {
	if len(s) < 4 || s[0] != '$' || s[1] != '{' || s[len(s)-1] != '}' {
		return Ref{}, false
	}
	var rec segRecorder
	end, ok := scanPath(s, 2, true, &rec)
	if !ok || end != len(s) {
		return Ref{}, false
	}
	return Ref{Raw: s, Path: s[2 : len(s)-1], Head: rec.headName, Segments: rec.segs, Start: 0, End: len(s)}, true
}

// ParsePath parses a path such as "fetch.items[0].name" or
// "prev.results[${__index__}].stdout" (without "${" and "}").
func ParsePath(path string) (head string, segs []Segment, err error) {
	var rec segRecorder
	s := path + "}"
	end, ok := scanPath(s, 0, true, &rec)
	if !ok || end != len(s) {
		return "", nil, fmt.Errorf("invalid template path %q: expected name(.key|[index])*, where names start with a letter or '_' and contain letters, digits, '_' or '-'", path)
	}
	return rec.headName, rec.segs, nil
}

// HasTemplate reports whether v (a string, or recursively a list or map)
// contains "${" anywhere, i.e. whether Resolve may change it: a reference, or
// the escape "$${x}" that Resolve renders as "${x}". Callers use it to skip
// resolution of template-free params; skipping would leave "$${x}" unrendered.
// Use Refs to find actual references.
func HasTemplate(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "${")
	case []any:
		for _, e := range x {
			if HasTemplate(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if HasTemplate(e) {
				return true
			}
		}
	}
	return false
}

// EachString calls fn with every string in v: v itself, or recursively
// each element of a list and each value of a map, in key order. With Refs
// it finds the templates a param holds.
func EachString(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			EachString(e, fn)
		}
	case map[string]any:
		for _, k := range value.SortedKeys(x) {
			EachString(x[k], fn)
		}
	}
}

// walker traverses a value while the path is scanned.
type walker struct {
	root  map[string]any
	cur   any
	found bool
	// shared is set once traversal went through a cached parse; a container
	// at the end of the path is then copied so callers can never modify the
	// cached value.
	shared bool
}

// value returns the final value, copying it when it belongs to a cached parse.
func (w *walker) value() any {
	if w.shared {
		switch w.cur.(type) {
		case map[string]any, []any:
			return value.Clone(w.cur)
		}
	}
	return w.cur
}

func (w *walker) container() any {
	if s, ok := w.cur.(string); ok && len(s) >= parseCacheMin {
		w.shared = true
	}
	return containerOf(w.cur)
}

func (w *walker) head(name string) {
	w.cur, w.found = w.root[name]
}

// container returns cur as a map or list, auto-parsing JSON strings.
func containerOf(v any) any {
	if s, ok := v.(string); ok && len(s) > 0 && (s[0] == '{' || s[0] == '[' || s[0] == ' ' || s[0] == '\n' || s[0] == '\t' || s[0] == '\r') {
		if p, ok := parseContainer(s); ok {
			return p
		}
	}
	return v
}

func (w *walker) key(name string) {
	if !w.found {
		return
	}
	m, ok := w.container().(map[string]any)
	if !ok {
		w.found = false
		w.cur = nil
		return
	}
	w.cur, w.found = m[name]
}

func (w *walker) index(n int) {
	if !w.found {
		return
	}
	l, ok := w.container().([]any)
	if !ok || n < 0 || n >= len(l) {
		w.found = false
		w.cur = nil
		return
	}
	w.cur = l[n]
}

func (w *walker) dynamic(s string, start, end int) {
	if !w.found {
		return
	}
	inner := walker{root: w.root}
	if _, ok := scanPath(s, start, false, &inner); !ok || !inner.found {
		w.found = false
		w.cur = nil
		return
	}
	n, ok := asIndex(inner.cur)
	if !ok {
		w.found = false
		w.cur = nil
		return
	}
	w.index(n)
}

func asIndex(v any) (int, bool) {
	switch x := v.(type) {
	case int64:
		return int(x), true
	case int:
		return x, true
	case float64:
		if x == float64(int(x)) {
			return int(x), true
		}
	}
	return 0, false
}

// Lookup traverses root along path ("a.b[0].c"). Strings holding JSON objects
// or arrays are parsed on the way; primitives never are. A nil value at the
// end of the path is found; traversing through nil is not.
func Lookup(root map[string]any, path string) (any, bool) {
	w := walker{root: root}
	s := path + "}"
	end, ok := scanPath(s, 0, true, &w)
	if !ok || end != len(s) {
		return nil, false
	}
	if !w.found {
		return nil, false
	}
	return w.value(), true
}

// eval scans and evaluates the template starting at j ("${" at j).
func eval(root map[string]any, s string, j int) (v any, found bool, end int, ok bool) {
	w := walker{root: root}
	end, ok = scanPath(s, j+2, true, &w)
	if !ok {
		return nil, false, 0, false
	}
	return w.value(), w.found, end, true
}

// Resolve resolves templates inside v (a string, or recursively []any and
// map[string]any) against root. A simple template ("${x}" alone) keeps the
// value's native type; inside maps and lists a simple template whose value is
// a string holding a JSON object or array is parsed into it. Text with
// templates becomes a string (values rendered with value.Stringify). "$${x}"
// renders as "${x}". Unresolved references stay as literal text and are
// returned deduplicated, in order of appearance. Containers in the result are
// fresh copies; v is never modified.
func Resolve(v any, root map[string]any) (out any, unresolved []string) {
	var u unresolvedSet
	out = resolveValue(v, root, false, &u)
	return out, u.list
}

// unresolvedSet keeps unresolved references in order, without duplicates,
// in time linear in their number.
type unresolvedSet struct {
	list   []string
	seen   map[string]bool // built once the list is long enough to pay off
	probes int             // comparisons and lookups made (tests check it is linear)
}

func (u *unresolvedSet) add(raw string) {
	if u.seen == nil {
		u.probes += len(u.list)
		if slices.Contains(u.list, raw) {
			return
		}
		u.list = append(u.list, raw)
		if len(u.list) > 8 {
			u.seen = make(map[string]bool, 2*len(u.list))
			for _, r := range u.list {
				u.seen[r] = true
			}
		}
		return
	}
	u.probes++
	if !u.seen[raw] {
		u.seen[raw] = true
		u.list = append(u.list, raw)
	}
}

func resolveValue(v any, root map[string]any, inContainer bool, unresolved *unresolvedSet) any {
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, "${") {
			return v // no re-boxing: no allocation for plain strings
		}
		return resolveString(x, root, inContainer, unresolved)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolveValue(e, root, true, unresolved)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = resolveValue(e, root, true, unresolved)
		}
		return out
	default:
		return v
	}
}

func resolveString(s string, root map[string]any, inContainer bool, unresolved *unresolvedSet) any {
	first := strings.Index(s, "${")
	if first < 0 {
		return s
	}
	// Simple template: keep the native type.
	if first == 0 {
		if v, found, end, ok := eval(root, s, 0); ok && end == len(s) {
			if !found {
				unresolved.add(s)
				return s
			}
			if inContainer {
				if str, isStr := v.(string); isStr {
					if p, ok := value.TryParseContainer(str); ok {
						return p
					}
				}
			}
			return v
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	last := 0
	for i := first; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		if escapedAt(s, j) {
			b.WriteString(s[last : j-1])
			b.WriteString("${")
			last = j + 2
			i = j + 2
			continue
		}
		v, found, end, ok := eval(root, s, j)
		if !ok {
			i = j + 2
			continue
		}
		if found {
			b.WriteString(s[last:j])
			b.WriteString(value.Stringify(v))
			last = end
		} else {
			unresolved.add(s[j:end])
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Part is one piece of a string split by Parts: literal text (with "$${"
// escapes already turned into "${") or one top-level template reference.
type Part struct {
	// Text is the literal text when Ref is nil.
	Text string
	// Ref is the reference when the part is a template.
	Ref *Ref
}

// Parts splits s into literal text and top-level template references, in
// order. Concatenating the Text of literal parts and the Raw of references
// gives s back, except that each "$${" escape becomes "${". Sinks that must
// not paste values into text (a shell command, a URL) use it to treat each
// value according to where it lands.
func Parts(s string) []Part {
	var out []Part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, Part{Text: lit.String()})
			lit.Reset()
		}
	}
	last := 0
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		if escapedAt(s, j) {
			lit.WriteString(s[last : j-1])
			lit.WriteString("${")
			last = j + 2
			i = j + 2
			continue
		}
		var rec segRecorder
		end, ok := scanPath(s, j+2, true, &rec)
		if !ok {
			i = j + 2
			continue
		}
		lit.WriteString(s[last:j])
		flush()
		out = append(out, Part{Ref: &Ref{Raw: s[j:end], Path: s[j+2 : end-1], Head: rec.headName, Segments: rec.segs, Start: j, End: end}})
		last = end
		i = end
	}
	lit.WriteString(s[last:])
	flush()
	return out
}

// Value evaluates one reference against root. found is false when the path
// does not resolve.
func Value(root map[string]any, ref Ref) (v any, found bool) {
	v, found, _, ok := eval(root, ref.Raw, 0)
	return v, ok && found
}
