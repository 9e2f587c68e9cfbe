package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// deepJSON is a JSON text nested n levels deep: {"a":{"a":...1...}} or [[...1...]].
func deepJSON(n int, list bool) string {
	open, close := `{"a":`, "}"
	if list {
		open, close = "[", "]"
	}
	return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
}

// nesting is the deepest container nesting of a decoded JSON value.
func nesting(v any) int {
	switch x := v.(type) {
	case []any:
		m := 0
		for _, e := range x {
			m = max(m, nesting(e))
		}
		return m + 1
	case map[string]any:
		m := 0
		for _, e := range x {
			m = max(m, nesting(e))
		}
		return m + 1
	}
	return 0
}

// runWith is a run whose inputs, step params, step outputs and workflow
// outputs all hold v.
func runWith(v any) (*runtime.Result, map[string]any) {
	return &runtime.Result{Status: runtime.RunSuccess, Started: time.Now(), Outputs: map[string]any{"out": v},
		Steps: []*runtime.Step{
			{NodeID: "produce", Type: "shell", Status: runtime.StatusCompleted, Outputs: map[string]any{"stdout": v}},
			{NodeID: "use", Type: "echo", Status: runtime.StatusCompleted, Params: map[string]any{"data": v}, Outputs: map[string]any{"data": v}},
		}}, map[string]any{"in": v}
}

func writeRaw(t *testing.T, res *runtime.Result, inputs map[string]any, r *redact.Redactor, lim limits) []byte {
	t.Helper()
	p, err := write(t.TempDir(), "flow", &workflow.Workflow{}, inputs, res, r, lim)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) > lim.file {
		t.Fatalf("trace is %d bytes, over its cap of %d", len(data), lim.file)
	}
	return data
}

// A value thousands of levels deep — the way a shell step's JSON stdout
// reaches a trace (parsed by value.TryParseContainer like a template does),
// or built in Go deeper than any JSON decoder allows — neither crashes the
// writer nor grows the trace: containers below MaxDepth become a marker.
func TestWriteCutsDeepValues(t *testing.T) {
	parsed := func(n int, list bool) any {
		v, ok := value.TryParseContainer(deepJSON(n, list))
		if !ok {
			t.Fatalf("%d levels should parse (encoding/json allows 10,000)", n)
		}
		return v
	}
	built := map[string]any{"leaf": int64(1)}
	for i := 0; i < 200_000; i++ {
		built = map[string]any{"a": built}
	}
	cases := []struct {
		name   string
		v      any
		marker string
	}{
		{"9,000-level object parsed from JSON", parsed(9000, false), "<truncated: deeper than 64 levels; object of 1 key>"},
		{"9,000-level list parsed from JSON", parsed(9000, true), "<truncated: deeper than 64 levels; list of 1 item>"},
		{"200,000-level object built in Go", built, "<truncated: deeper than 64 levels; object of 1 key>"},
		// Beyond encoding/json's 10,000 levels the text stays a string: cut by MaxString.
		{"20,000-level JSON text", deepJSON(20000, false), fmt.Sprintf("... <truncated: kept %d of %d bytes>", MaxString, len(deepJSON(20000, false)))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if s, ok := c.v.(string); ok {
				if _, parsed := value.TryParseContainer(s); parsed {
					t.Fatal("20,000 levels should not parse")
				}
			}
			res, inputs := runWith(c.v)
			data := writeRaw(t, res, inputs, redact.NewRedactor(), defaultLimits)
			if got := bytes.Count(data, []byte(c.marker)); got != 5 {
				t.Fatalf("want the marker %q once per copy of the value (5), got %d", c.marker, got)
			}
			var f File
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatalf("not valid JSON: %v", err)
			}
			if !f.Truncated {
				t.Fatal(`"truncated" must be true`)
			}
			var doc any
			json.Unmarshal(data, &doc)
			// file → nodes → node → outputs: 4 levels of the trace's own around a value.
			if n := nesting(doc); n > MaxDepth+4 {
				t.Fatalf("trace nests %d levels, cap is %d (+4 of the trace's own)", n, MaxDepth)
			}
			if len(data) > 100_000 {
				t.Fatalf("a cut deep value should make a small trace, got %d bytes", len(data))
			}
		})
	}
}

// A 50 MB string is cut to MaxString wherever it appears.
func TestWriteCuts50MBString(t *testing.T) {
	big := strings.Repeat("x", 50_000_000)
	res, inputs := runWith(big)
	data := writeRaw(t, res, inputs, redact.NewRedactor(), defaultLimits)
	marker := fmt.Sprintf("... <truncated: kept %d of %d bytes>", MaxString, len(big))
	if got := bytes.Count(data, []byte(marker)); got != 5 {
		t.Fatalf("want %q 5 times, got %d", marker, got)
	}
	if len(data) > 6*(MaxString+200)+2000 {
		t.Fatalf("trace is %d bytes", len(data))
	}
}

// Values that are each within the per-value caps but together far larger
// than MaxFileBytes are cut to fit, the largest first: the file stays
// under the cap, small values and the failure survive whole, and every
// cut says what was left out.
func TestWriteStaysUnderFileCap(t *testing.T) {
	chunk := strings.Repeat("y", 12_000) // one string shared by every item: the test's own memory stays small
	items := make([]any, 2000)
	for i := range items {
		items[i] = chunk
	}
	var steps []*runtime.Step
	for i := 0; i < 300; i++ {
		steps = append(steps, &runtime.Step{NodeID: fmt.Sprintf("s%d", i), Type: "shell", Status: runtime.StatusCompleted,
			Params: map[string]any{"command": "echo small"}, Outputs: map[string]any{"exit_code": int64(0), "items": items}})
	}
	steps = append(steps, &runtime.Step{NodeID: "last", Type: "shell", Status: runtime.StatusFailed, Error: "boom: the reason",
		Outputs: map[string]any{"stderr": "why it failed"}})
	res := &runtime.Result{Status: runtime.RunFailed, Started: time.Now(), Steps: steps,
		Failure: &runtime.Failure{NodeID: "last", Category: "execution", Message: "boom: the reason"}}
	data := writeRaw(t, res, map[string]any{"small": "input"}, redact.NewRedactor(), defaultLimits)
	if len(data) < MaxFileBytes/2 {
		t.Fatalf("the budget should be used, not wasted: %d bytes", len(data))
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	if !f.Truncated || !bytes.Contains(data, []byte("more items (trace size limit)>")) {
		t.Fatal("the size cap must leave a marker")
	}
	if len(f.Nodes) != 301 || f.Nodes[300].Error != "boom: the reason" || f.Nodes[300].Outputs.(map[string]any)["stderr"] != "why it failed" ||
		f.Failure.(map[string]any)["message"] != "boom: the reason" {
		t.Fatalf("the failure must survive whole: %d nodes, %+v", len(f.Nodes), f.Failure)
	}
	for _, n := range f.Nodes[:300] {
		if n.Params.(map[string]any)["command"] != "echo small" || n.Outputs.(map[string]any)["exit_code"] != float64(0) {
			t.Fatalf("small values must survive: %+v", n)
		}
		if kept := n.Outputs.(map[string]any)["items"].([]any); len(kept) < 2 {
			t.Fatalf("each large value gets its share: %d items kept", len(kept))
		}
	}
	if f.Inputs.(map[string]any)["small"] != "input" {
		t.Fatalf("inputs: %v", f.Inputs)
	}
}

func TestWriteCapsItemsKeysAndNodes(t *testing.T) {
	list := make([]any, 5000)
	for i := range list {
		list[i] = int64(i)
	}
	obj := map[string]any{}
	for i := 0; i < 3000; i++ {
		obj[fmt.Sprintf("k%04d", i)] = int64(i)
	}
	var steps []*runtime.Step
	for i := 0; i < MaxNodes+5; i++ {
		steps = append(steps, &runtime.Step{NodeID: fmt.Sprintf("s%d", i), Type: "echo", Status: runtime.StatusCompleted})
	}
	steps[0].Outputs = map[string]any{"list": list, "obj": obj}
	f, data := writeAndRead(t, &runtime.Result{Status: runtime.RunSuccess, Started: time.Now(), Steps: steps}, redact.NewRedactor())
	out := f.Nodes[0].Outputs.(map[string]any)
	l := out["list"].([]any)
	if len(l) != MaxItems+1 || l[MaxItems-1] != float64(MaxItems-1) || l[MaxItems] != "<truncated: 4000 more items>" {
		t.Fatalf("list: %d items, last %v", len(l), l[len(l)-1])
	}
	o := out["obj"].(map[string]any)
	if len(o) != MaxItems+1 || o["k0999"] != float64(999) || o["k1000"] != nil || o["<truncated>"] != "<truncated: 2000 more keys>" {
		t.Fatalf("object: %d keys, marker %v", len(o), o["<truncated>"])
	}
	if len(f.Nodes) != MaxNodes || f.NodesOmitted != 5 || f.NodesExecuted != MaxNodes+5 || !f.Truncated {
		t.Fatalf("nodes: %d listed, %d omitted, %d executed", len(f.Nodes), f.NodesOmitted, f.NodesExecuted)
	}
	if int64(len(data)) > MaxFileBytes {
		t.Fatal("over the cap")
	}
}

// Within the caps, the encoder writes exactly what encoding/json's indented
// encoder writes (escaping, numbers, layout).
func TestEncoderMatchesEncodingJSON(t *testing.T) {
	v := map[string]any{
		"strings": []any{"plain", `quo"te\back`, "ctl\x00\x01\b\f\n\r\t\x1f", "<html> & ünïcode ✓ 🚀", "bad\xffutf8", "line\u2028sep\u2029", ""},
		"numbers": []any{int64(0), int64(-42), int64(math.MaxInt64), 1.5, -0.25, 1e21, 1e-7, 123456789.125, float64(3)},
		"other":   []any{true, false, nil, []any{}, map[string]any{}},
		"nested":  map[string]any{"b": map[string]any{"c": []any{map[string]any{"d": "e"}}}, "a": int64(1)},
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	e := &encoder{w: &got, red: redact.NewRedactor(), lim: defaultLimits, end: math.MaxInt64}
	e.slot(v, math.MaxInt64)
	got.WriteString("\n")
	if got.String() != want.String() {
		t.Fatalf("encoder:\n%s\nencoding/json:\n%s", got.String(), want.String())
	}
	if e.cut {
		t.Fatal("nothing should be cut")
	}
}

// randomValue builds a random value up to depth levels deep.
func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(10)
	if depth <= 0 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return int64(r.IntN(1 << 20))
	case 1:
		return r.Float64() * 1000
	case 2:
		return strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(300)) + "\"\n\x01é"
	case 3:
		return nil
	case 4:
		return r.IntN(2) == 0
	case 5, 6, 7:
		n := r.IntN(12)
		l := make([]any, n)
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	default:
		n := r.IntN(12)
		m := make(map[string]any, n)
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("key-%d-%s", i, strings.Repeat("k", r.IntN(20)))] = randomValue(r, depth-1)
		}
		return m
	}
}

// Property: whatever the values and caps, the file is valid JSON within its
// byte cap, and a value that fits is written whole.
func TestWriteRandomValuesWithinSmallCaps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizeCuts := 0
	for i := 0; i < 300; i++ {
		lim := limits{depth: 1 + r.IntN(8), str: 1 + r.IntN(200), items: 1 + r.IntN(20), nodes: 1 + r.IntN(6),
			file: int64(8_000 + r.IntN(60_000))}
		var steps []*runtime.Step
		for j := 0; j < 1+r.IntN(8); j++ {
			s := &runtime.Step{NodeID: fmt.Sprintf("s%d", j), Type: "shell", Status: runtime.StatusCompleted,
				Params: map[string]any{"p": randomValue(r, 5)}, Outputs: map[string]any{"o": randomValue(r, 5)}}
			if r.IntN(3) == 0 {
				s.Status, s.Error = runtime.StatusFailed, strings.Repeat("err ", r.IntN(2000))
			}
			steps = append(steps, s)
		}
		res := &runtime.Result{Status: runtime.RunSuccess, Started: time.Now(), Steps: steps, Outputs: map[string]any{"x": randomValue(r, 5)}}
		data := writeRaw(t, res, map[string]any{"i": randomValue(r, 4)}, redact.NewRedactor(), lim)
		var f File
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("case %d (%+v): not valid JSON: %v\n%s", i, lim, err, data)
		}
		if !f.Truncated && bytes.Contains(data, []byte(Truncated)) {
			t.Fatalf("case %d: markers but truncated is false", i)
		}
		if bytes.Contains(data, []byte("trace size limit")) {
			sizeCuts++
		}
	}
	if sizeCuts < 50 {
		t.Fatalf("only %d of 300 cases reached the size cap: the test no longer exercises it", sizeCuts)
	}
	// With room to spare and no cap reached, values are written whole.
	v := map[string]any{"a": []any{"x", int64(1), map[string]any{"b": nil}}}
	res, inputs := runWith(v)
	lim := limits{depth: 10, str: 100, items: 10, nodes: 10, file: 1 << 20}
	var f File
	if err := json.Unmarshal(writeRaw(t, res, inputs, redact.NewRedactor(), lim), &f); err != nil {
		t.Fatal(err)
	}
	want, _ := value.DecodeJSON([]byte(`{"a":["x",1,{"b":null}]}`))
	got, _ := json.Marshal(f.Outputs.(map[string]any)["out"])
	gotV, _ := value.DecodeJSON(got)
	if f.Truncated || !reflect.DeepEqual(gotV, want) {
		t.Fatalf("truncated %v, got %s", f.Truncated, got)
	}
}
