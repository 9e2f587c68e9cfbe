package value

import (
	"math"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// YAMLFlow writes one line that YAML reads back as the same value: whole
// floats keep their point, NaN and the infinities are strings, and the
// characters YAML refuses or folds (DEL, C1 controls, NEL, BOM) are escaped
// in keys and values alike.
func TestYAMLFlowReadsBack(t *testing.T) {
	for _, v := range []any{
		"plain", "quote \" and \\", "nel \u0085 del \x7f bom \ufeff c1 \u0090", int64(3), 2.0, 2.5, 1e21, 1e-7, true, nil,
		[]any{int64(1), 2.0, "x"},
		map[string]any{"b": int64(1), "a": []any{"y", 3.0}, "odd key \u0085": "v \u0085"},
	} {
		text := YAMLFlow(v, nil)
		var back any
		if err := yaml.Unmarshal([]byte("k: "+text), &back); err != nil {
			t.Fatalf("%#v: %s does not parse: %v", v, text, err)
		}
		got := Normalize(back.(map[string]any)["k"])
		if !reflect.DeepEqual(got, Normalize(v)) {
			t.Errorf("%#v: %s reads back as %#v", v, text, got)
		}
	}
	for f, want := range map[float64]string{math.NaN(): `"NaN"`, math.Inf(1): `"Infinity"`, math.Inf(-1): `"-Infinity"`, 2: "2.0", 1e21: "1e+21"} {
		if got := YAMLFlow(f, nil); got != want {
			t.Errorf("YAMLFlow(%v) = %s, want %s", f, got, want)
		}
	}
}

// A key is plain only where plainKey allows it; nested maps too.
func TestYAMLFlowKeys(t *testing.T) {
	v := map[string]any{"name": "${x}", "two words": map[string]any{"inner": int64(1)}}
	if got, want := YAMLFlow(v, nil), `{"name": "${x}", "two words": {"inner": 1}}`; got != want {
		t.Errorf("all quoted: %s, want %s", got, want)
	}
	plain := func(k string) bool { return k == "name" || k == "inner" }
	if got, want := YAMLFlow(v, plain), `{name: "${x}", "two words": {inner: 1}}`; got != want {
		t.Errorf("plain names: %s, want %s", got, want)
	}
	if got, want := YAMLFlow(map[string]string{"a": "\u0085"}, nil), `{"a": "\u0085"}`; got != want {
		t.Errorf("map[string]string: %s, want %s", got, want)
	}
}
