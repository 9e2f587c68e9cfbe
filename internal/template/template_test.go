package template

import (
	"fmt"
	"github.com/pflow-go/pflow/internal/suggest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/value"
)

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := value.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testRoot(t testing.TB) map[string]any {
	return mustJSON(t, `{
		"name": "bob",
		"count": 2,
		"ratio": 0.5,
		"big": 3.0,
		"flag": true,
		"off": false,
		"nothing": null,
		"id_str": "1458059302022549698",
		"tags": ["a", "b"],
		"fetch": {"response": {"items": [{"id": 7, "name": "x"}, {"id": 8, "name": "y"}]}, "status_code": 200},
		"fetch-data": {"response": "hyphen"},
		"sh": {"stdout": "{\"items\": [{\"name\": \"first\"}], \"n\": 1}", "num": "42", "plain": "hello"},
		"arr": {"stdout": "[1, 2, 3]"},
		"prev": {"results": [{"stdout": "r0"}, {"stdout": "r1"}]},
		"__index__": 1,
		"idx_str": "1",
		"empty": ""
	}`).(map[string]any)
}

func TestRefs(t *testing.T) {
	tests := []struct {
		in   string
		want []string // Raw of each ref
	}{
		{"no templates", nil},
		{"${a}", []string{"${a}"}},
		{"x ${a.b} y ${c[0].d}", []string{"${a.b}", "${c[0].d}"}},
		{"${fetch-data.response}", []string{"${fetch-data.response}"}},
		{"$${escaped} and ${real}", []string{"${real}"}},
		{"${prev.results[${__index__}].stdout}", []string{"${prev.results[${__index__}].stdout}", "${__index__}"}},
		{"echo ${VAR:-x} ${#arr} ${} ${ a } ${1}", nil},
		{"unclosed ${a.b", nil},
		{"${a..b} ${a.} ${.a} ${a[x]} ${a[]}", nil},
		{"${a}${b}", []string{"${a}", "${b}"}},
		{"$$${x}", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var got []string
			for _, r := range Refs(tc.in) {
				got = append(got, r.Raw)
				if tc.in[r.Start:r.End] != r.Raw {
					t.Errorf("Start/End %d:%d do not delimit %q", r.Start, r.End, r.Raw)
				}
				if r.Raw != "${"+r.Path+"}" {
					t.Errorf("Raw %q != ${Path} for Path %q", r.Raw, r.Path)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Refs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRefSegments(t *testing.T) {
	refs := Refs("${log.commits[0].sha} ${prev.results[${__index__}].stdout}")
	if len(refs) != 3 {
		t.Fatalf("got %d refs", len(refs))
	}
	want := []Segment{{Key: "commits"}, {Index: 0, IsIndex: true}, {Key: "sha"}}
	if refs[0].Head != "log" || !reflect.DeepEqual(refs[0].Segments, want) {
		t.Errorf("got head %q segs %+v", refs[0].Head, refs[0].Segments)
	}
	want2 := []Segment{{Key: "results"}, {Key: "__index__", IsIndex: true}, {Key: "stdout"}}
	if refs[1].Head != "prev" || !reflect.DeepEqual(refs[1].Segments, want2) {
		t.Errorf("got head %q segs %+v", refs[1].Head, refs[1].Segments)
	}
	if !refs[1].Segments[1].Dynamic() || refs[0].Segments[1].Dynamic() {
		t.Error("Dynamic() wrong")
	}
	if !refs[2].Nested || refs[2].Head != "__index__" || refs[1].Nested {
		t.Errorf("nested flag wrong: %+v", refs[2])
	}
	if got := JoinPath(refs[1].Head, refs[1].Segments); got != "prev.results[${__index__}].stdout" {
		t.Errorf("JoinPath = %q", got)
	}
}

func TestIsSimple(t *testing.T) {
	for in, want := range map[string]bool{
		"${a}": true, "${a.b[0]}": true, "${a[${i}]}": true,
		" ${a}": false, "${a} ": false, "${a}${b}": false, "$${a}": false, "${a": false, "": false, "${}": false,
	} {
		if _, got := IsSimple(in); got != want {
			t.Errorf("IsSimple(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParsePath(t *testing.T) {
	head, segs, err := ParsePath("fetch.items[2].name")
	if err != nil || head != "fetch" || !reflect.DeepEqual(segs, []Segment{{Key: "items"}, {Index: 2, IsIndex: true}, {Key: "name"}}) {
		t.Errorf("got %q %+v %v", head, segs, err)
	}
	for _, bad := range []string{"", "a..b", "a.", "1a", "a[x]", "a b", "a}"} {
		if _, _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) should fail", bad)
		} else if !strings.Contains(err.Error(), "invalid template path") {
			t.Errorf("error should explain: %v", err)
		}
	}
}

func TestLookup(t *testing.T) {
	root := testRoot(t)
	tests := []struct {
		path  string
		want  any
		found bool
	}{
		{"name", "bob", true},
		{"count", int64(2), true},
		{"nothing", nil, true},
		{"nothing.x", nil, false},
		{"missing", nil, false},
		{"fetch.response.items[1].name", "y", true},
		{"fetch.response.items[2]", nil, false},
		{"fetch-data.response", "hyphen", true},
		{"sh.stdout.items[0].name", "first", true}, // JSON auto-parse while traversing
		{"sh.stdout.n", int64(1), true},
		{"arr.stdout[2]", int64(3), true},
		{"sh.plain.x", nil, false},
		{"sh.num", "42", true}, // primitives never parsed
		{"id_str", "1458059302022549698", true},
		{"prev.results[${__index__}].stdout", "r1", true},
		{"prev.results[${idx_str}].stdout", nil, false}, // inner index must be an int
		{"tags[0]", "a", true},
		{"tags.x", nil, false},
		{"fetch[0]", nil, false},
		{"a..b", nil, false},
	}
	for _, tc := range tests {
		got, found := Lookup(root, tc.path)
		if found != tc.found || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Lookup(%q) = %#v, %v; want %#v, %v", tc.path, got, found, tc.want, tc.found)
		}
	}
}

func TestResolveStrings(t *testing.T) {
	root := testRoot(t)
	tests := []struct {
		in         string
		want       any
		unresolved []string
	}{
		// Type preservation for a lone template.
		{"${count}", int64(2), nil},
		{"${ratio}", 0.5, nil},
		{"${flag}", true, nil},
		{"${nothing}", nil, nil},
		{"${tags}", []any{"a", "b"}, nil},
		{"${fetch.response.items[0]}", map[string]any{"id": int64(7), "name": "x"}, nil},
		{"${sh.stdout}", `{"items": [{"name": "first"}], "n": 1}`, nil}, // top level: stays a string
		{"${fetch-data.response}", "hyphen", nil},
		// Stringification inside text.
		{"hello ${name}!", "hello bob!", nil},
		{"n=${count} r=${ratio} b=${big}", "n=2 r=0.5 b=3", nil},
		{"t=${flag} f=${off}", "t=true f=false", nil},
		{"[${nothing}]", "[]", nil},
		{"tags=${tags}", `tags=["a","b"]`, nil},
		{"item=${fetch.response.items[1]}", `item={"id":8,"name":"y"}`, nil},
		{"${name}${count}", "bob2", nil},
		{"id ${id_str}", "id 1458059302022549698", nil},
		// JSON auto-parse while traversing.
		{"${sh.stdout.items[0].name}", "first", nil},
		// Escapes.
		{"$${name}", "${name}", nil},
		{"cost: $${price} for ${name}", "cost: ${price} for bob", nil},
		{"$$${name}", "$${name}", nil},
		{"echo ${VAR:-default} ${#arr}", "echo ${VAR:-default} ${#arr}", nil},
		// Nested index.
		{"${prev.results[${__index__}].stdout}", "r1", nil},
		{"got ${prev.results[${__index__}].stdout}", "got r1", nil},
		// Unresolved stay literal and are reported once, in order.
		{"${missing}", "${missing}", []string{"${missing}"}},
		{"${b.x} ${a} ${b.x} ${name}", "${b.x} ${a} ${b.x} bob", []string{"${b.x}", "${a}"}},
		{"${prev.results[${nope}].stdout}", "${prev.results[${nope}].stdout}", []string{"${prev.results[${nope}].stdout}"}},
		{"${nothing.x}", "${nothing.x}", []string{"${nothing.x}"}},
		{"plain", "plain", nil},
		{"", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, unresolved := Resolve(tc.in, root)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Resolve(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
			if !reflect.DeepEqual(unresolved, tc.unresolved) {
				t.Errorf("unresolved = %q, want %q", unresolved, tc.unresolved)
			}
		})
	}
}

func TestResolveNested(t *testing.T) {
	root := testRoot(t)
	params := map[string]any{
		"headers": map[string]any{"X-Name": "${name}", "X-Count": "${count}", "Static": "s"},
		"body":    map[string]any{"data": "${sh.stdout}", "num": "${sh.num}", "text": "raw: ${sh.stdout}", "list": []any{"${tags}", "${missing}", int64(3)}},
		"url":     "https://x/${fetch-data.response}",
	}
	orig := value.Clone(params)
	got, unresolved := Resolve(params, root)
	want := map[string]any{
		"headers": map[string]any{"X-Name": "bob", "X-Count": int64(2), "Static": "s"},
		"body": map[string]any{
			// Inside containers a simple template holding a JSON object is parsed...
			"data": map[string]any{"items": []any{map[string]any{"name": "first"}}, "n": int64(1)},
			// ...but never a primitive-looking string.
			"num":  "42",
			"text": `raw: {"items": [{"name": "first"}], "n": 1}`,
			"list": []any{[]any{"a", "b"}, "${missing}", int64(3)},
		},
		"url": "https://x/hyphen",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(unresolved, []string{"${missing}"}) {
		t.Errorf("unresolved = %q", unresolved)
	}
	if !reflect.DeepEqual(params, orig) {
		t.Error("Resolve modified its input")
	}
}

func TestHasTemplate(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{"x", false}, {"${a}", true}, {"$${a}", true}, {"$ {a}", false}, {"$${a} ${b}", true}, {"${VAR:-x}", true},
		{[]any{"a", map[string]any{"k": "${x}"}}, true}, {map[string]any{"k": []any{"a", int64(1)}}, false}, {int64(1), false}, {nil, false},
	} {
		if got := HasTemplate(tc.v); got != tc.want {
			t.Errorf("HasTemplate(%#v) = %v", tc.v, got)
		}
	}
}

func TestResolveNoAllocForPlainStrings(t *testing.T) {
	root := testRoot(t)
	allocs := testing.AllocsPerRun(100, func() {
		Resolve("a plain string without templates, even with $ signs and {braces}", root)
	})
	if allocs > 0 {
		t.Errorf("plain string resolve allocated %.0f times", allocs)
	}
}

func TestUnresolvedError(t *testing.T) {
	root := testRoot(t)
	root["mynode"] = nil
	delete(root, "mynode")
	root["my-node"] = map[string]any{"x": "1", "stderr": "boom: file not found"}
	tests := []struct {
		name     string
		vars     []string
		contains []string
		absent   []string
	}{
		{
			name: "all vars and context",
			vars: []string{"${mynode.x}", "${fetch.respons}"},
			contains: []string{
				"Unresolved variables in parameter 'command': ${mynode.x}, ${fetch.respons}",
				"  ${mynode.x}: 'mynode' is not a workflow input or the output namespace of a node that has run",
				"  ${fetch.respons}: ${fetch} has no key 'respons' (it has: response, status_code)",
				"Available context keys:",
				"  • name (str): \"bob\"",
				"  • count (int): 2",
				"  • fetch (dict): keys response, status_code",
				"💡 Suggestions:",
				"  Did you mean '${my-node.x}'? (instead of '${mynode.x}')",
				"  Did you mean '${fetch.response}'? (instead of '${fetch.respons}')",
			},
			absent: []string{"__index__", "JSON parsing issue"},
		},
		{
			name: "json hint",
			vars: []string{"${sh.plain.field}"},
			contains: []string{
				"⚠️ JSON parsing issue:",
				"  ${sh.plain} is a string, not JSON. Nested access (.field) requires valid JSON.",
				`    Actual value: "hello"`,
				"  Fix: Ensure upstream node outputs valid JSON.",
			},
			absent: []string{"💡 Suggestions:"},
		},
		{
			name:     "index out of range",
			vars:     []string{"${fetch.response.items[5].id}"},
			contains: []string{"index 5 is out of range: ${fetch.response.items} has 2 item(s)"},
		},
		{
			name:     "upstream stderr",
			vars:     []string{"${my-node.y}"},
			contains: []string{"  ⚠️  Upstream node 'my-node' stderr:\n     boom: file not found"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := UnresolvedError("command", tc.vars, root)
			msg := err.Error()
			for _, c := range tc.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("message lacks %q:\n%s", c, msg)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(msg, a) {
					t.Errorf("message should not contain %q:\n%s", a, msg)
				}
			}
			var ue *UnresolvedVarsError
			if e, ok := err.(*UnresolvedVarsError); !ok || e.Param != "command" {
				t.Errorf("want *UnresolvedVarsError, got %T", err)
			} else {
				ue = e
				if !reflect.DeepEqual(ue.Vars, tc.vars) {
					t.Errorf("Vars = %q", ue.Vars)
				}
			}
		})
	}
}

func TestUnresolvedErrorContextCap(t *testing.T) {
	root := map[string]any{}
	for i := 0; i < 25; i++ {
		root[string(rune('a'+i))+"key"] = int64(i)
	}
	msg := UnresolvedError("p", []string{"${zz}"}, root).Error()
	if !strings.Contains(msg, "  ... and 5 more") {
		t.Errorf("want cap of 20 keys:\n%s", msg)
	}
	if strings.Contains(msg, "ykey") {
		t.Errorf("keys beyond 20 should be cut:\n%s", msg)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"shell", "http", "read-file", "write-file", "llm"}
	tests := []struct {
		word string
		want []string
	}{
		{"shel", []string{"shell"}},
		{"read_file", []string{"read-file"}},
		{"Shell", []string{"shell"}},
		{"xyzzy", nil},
	}
	for _, tc := range tests {
		if got := suggest.Closest(tc.word, cands, 1, 0.6); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("suggest.Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	root := testRoot(b)
	params := map[string]any{
		"command": "echo ${name} ${prev.results[${__index__}].stdout}",
		"url":     "${fetch.response.items[1].name}",
		"static":  "no templates here",
		"headers": map[string]any{"X-Count": "${count}", "Accept": "application/json"},
	}
	b.ReportAllocs()
	for b.Loop() {
		out, unresolved := Resolve(params, root)
		if len(unresolved) != 0 || out == nil {
			b.Fatal(unresolved)
		}
	}
}

func TestTraversalIntoLargeJSONText(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name": "n` + strconv.Itoa(i) + `"}`)
	}
	b.WriteString(`]}`)
	root := map[string]any{"sh": map[string]any{"stdout": b.String()}}
	for _, i := range []int{0, 1999, 7, 1999} {
		root["__index__"] = int64(i)
		got, un := Resolve("${sh.stdout.items[${__index__}].name}", root)
		if got != "n"+strconv.Itoa(i) || un != nil {
			t.Fatalf("item %d: got %#v %q", i, got, un)
		}
	}
	// A different string with the same length is parsed on its own.
	other := strings.Replace(b.String(), `"n0"`, `"x0"`, 1)
	root["sh"] = map[string]any{"stdout": other}
	root["__index__"] = int64(0)
	if got, _ := Resolve("${sh.stdout.items[${__index__}].name}", root); got != "x0" {
		t.Fatalf("stale cache: %#v", got)
	}
}

// BenchmarkBatchIndexIntoJSONText is a 1,000-item batch where each item reads
// its entry from one large JSON stdout.
func BenchmarkBatchIndexIntoJSONText(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`[`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"id": ` + strconv.Itoa(i) + `, "name": "item"}`)
	}
	sb.WriteString(`]`)
	root := map[string]any{"list": map[string]any{"stdout": sb.String()}}
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < 1000; i++ {
			root["__index__"] = int64(i)
			if _, un := Resolve("${list.stdout[${__index__}].id}", root); un != nil {
				b.Fatal(un)
			}
		}
	}
}

func TestCachedParsesCannotBeModified(t *testing.T) {
	big := `{"cfg": {"headers": {"A": "1"}}, "pad": "` + strings.Repeat("x", 2048) + `"}`
	root := map[string]any{"sh": map[string]any{"stdout": big}}
	got, _ := Resolve("${sh.stdout.cfg.headers}", root)
	got.(map[string]any)["B"] = "2" // a node modifying its param
	again, _ := Resolve("${sh.stdout.cfg.headers}", root)
	if !reflect.DeepEqual(again, map[string]any{"A": "1"}) {
		t.Fatalf("cached parse was modified through a resolved value: %#v", again)
	}
}

// TestHasTemplateGatesEscapes: callers skip Resolve when HasTemplate is
// false, so an escape-only value must still report true or "$${x}" would
// reach the node unrendered.
func TestHasTemplateGatesEscapes(t *testing.T) {
	params := map[string]any{"command": "echo $${HOME}"}
	if !HasTemplate(params) {
		t.Fatal("an escape needs resolving")
	}
	out, _ := Resolve(params, nil)
	if got := out.(map[string]any)["command"]; got != "echo ${HOME}" {
		t.Fatalf("got %q", got)
	}
}

func TestParts(t *testing.T) {
	tests := []struct {
		in   string
		want []string // literal text as is, references as <raw>
	}{
		{"echo hi", []string{"echo hi"}},
		{"${a}", []string{"<${a}>"}},
		{`echo "hello ${name}!"`, []string{`echo "hello `, "<${name}>", `!"`}},
		{"$${x} ${y.z[0]}", []string{"${x} ", "<${y.z[0]}>"}},
		{"${a[${i}]}x", []string{"<${a[${i}]}>", "x"}},
		{"${VAR:-d} ${1}", []string{"${VAR:-d} ${1}"}},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range Parts(tt.in) {
			if p.Ref != nil {
				got = append(got, "<"+p.Ref.Raw+">")
			} else {
				got = append(got, p.Text)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Parts(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	root := map[string]any{"a": []any{"x", "y"}, "i": int64(1)}
	ref := Parts("${a[${i}]}")[0].Ref
	if v, ok := Value(root, *ref); !ok || v != "y" {
		t.Errorf("Value = %v, %v; want y", v, ok)
	}
	if _, ok := Value(root, Ref{Raw: "${nope}"}); ok {
		t.Error("Value of a missing path reported found")
	}
}

// TestResolveUnresolvedLinear: text with n distinct unresolved references
// costs a number of duplicate checks linear in n (a list search per
// reference made it quadratic), and the list keeps order without duplicates.
func TestResolveUnresolvedLinear(t *testing.T) {
	probes := func(n int) (int, []string) {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "${missing%05d} ${missing%05d} ", i, i)
		}
		var u unresolvedSet
		resolveValue(b.String(), map[string]any{}, false, &u)
		return u.probes, u.list
	}
	small, list := probes(256)
	large, _ := probes(1024)
	if len(list) != 256 || list[0] != "${missing00000}" || list[255] != "${missing00255}" {
		t.Fatalf("unresolved list: %d entries, %q … %q", len(list), list[0], list[len(list)-1])
	}
	if r := float64(large) / float64(small); r > 4.4 {
		t.Fatalf("duplicate checks grow %.1f× for 4× the references (%d → %d); want linear", r, small, large)
	}
}

// An upstream step's stderr is cut at a rune boundary (it was cut at byte
// 500 even inside a character), and a string in the context listing is
// quoted with its quotes escaped.
func TestUnresolvedErrorCutsStderrAtARune(t *testing.T) {
	root := map[string]any{
		"sh":   map[string]any{"stdout": "", "stderr": strings.Repeat("a", 499) + "é and more"},
		"note": `say "hi"`,
	}
	msg := UnresolvedError("command", []string{"${sh.missing}"}, root).Error()
	if !utf8.ValidString(msg) {
		t.Errorf("message is not valid UTF-8:\n%q", msg)
	}
	if !strings.Contains(msg, strings.Repeat("a", 499)+"...") {
		t.Errorf("stderr not cut before the é:\n%s", msg)
	}
	if !strings.Contains(msg, `• note (str): "say \"hi\""`) {
		t.Errorf("string not quoted:\n%s", msg)
	}
}

// EachString visits every string of a value once, maps in key order.
func TestEachString(t *testing.T) {
	var got []string
	EachString(map[string]any{"b": []any{"b1", int64(2), map[string]any{"z": "bz", "a": "ba"}}, "a": "a", "c": nil}, func(s string) {
		got = append(got, s)
	})
	if want := []string{"a", "b1", "ba", "bz"}; !reflect.DeepEqual(got, want) {
		t.Errorf("EachString visited %q, want %q", got, want)
	}
}
