package cond

import (
	"errors"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	root := map[string]any{
		"count":  int64(3),
		"zero":   int64(0),
		"ls":     map[string]any{"stdout": "12\n", "lines": []any{"a", "b"}, "empty": []any{}},
		"mode":   "full",
		"flag":   true,
		"blank":  " \n",
		"f":      2.5,
		"nested": map[string]any{"items": []any{map[string]any{"id": int64(7)}}},
	}
	cases := []struct {
		src  string
		want bool
	}{
		{"${count} > 0", true},
		{"${zero} == 0", true},
		{"${ls.stdout} > 9", true},
		{"${ls.stdout} == 12", true},
		{"${ls.stdout} == \"12\"", true},
		{"${ls.stdout} >= 10 and ${ls.stdout} < 100", true},
		{"${mode} == \"full\"", true},
		{"${mode} != 'full'", false},
		{"${mode} contains \"ul\"", true},
		{"\"a\" in ${ls.lines}", true},
		{"empty(${ls.empty})", true},
		{"empty(${blank})", true},
		{"not empty(${mode})", true},
		{"len(${ls.lines}) == 2", true},
		{"${flag}", true},
		{"!${flag}", false},
		{"${f} > 2", true},
		{"${nested.items[0].id} == 7", true},
		{"(${missing.stdout} ?? \"none\") == \"none\"", true},
		{"(${missing.stdout} ?? 0) > 1", false},
		{"${count} > 1 || ${zero} > 1", true},
	}
	for _, c := range cases {
		x, err := Compile(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, err := x.Eval(root)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got != c.want {
			t.Errorf("%s = %v, want %v", c.src, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	cases := map[string]string{
		"count > 0":            "'count' is not a value",
		"${count} >":           "not a valid expression",
		"\"${name}\" == \"x\"": "inside quotes",
		"":                     "empty",
		"${count} = 1":         "not a valid expression",
		"now() > 1":            "cannot call now()",
		"nope(${count})":       "no function nope()",
		"${a} ?? 1 == 1":       "Wrap either by parentheses",
	}
	for src, want := range cases {
		_, err := Compile(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

// TestSingleEqualsNamesTheComparison: '=' where '==' was meant is named with
// the condition rewritten; '==', '!=', '<=', '>=' and '=' in quotes are not.
func TestSingleEqualsNamesTheComparison(t *testing.T) {
	for src, want := range map[string]string{
		`${env} = "prod"`:             `(${env} == "prod")`,
		`${a} == 1 and ${b} = 2`:      `(${a} == 1 and ${b} == 2)`,
		`${n} >= 1 and ${mode}="x=y"`: `(${n} >= 1 and ${mode}=="x=y")`,
	} {
		_, err := Compile(src)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(ce.Fix, "'=' is not a comparison: write '==' "+want) {
			t.Errorf("%q: got %v (fix %q), want %q", src, err, fixOf(ce), want)
		}
	}
	if i := singleEquals(`${a} == "=" and ${b} != 1 and ${c} <= 2`); i != -1 {
		t.Errorf("singleEquals found a lone '=' at %d", i)
	}
}

func fixOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Fix
}

func TestEvalErrors(t *testing.T) {
	x, _ := Compile("${a.b} > 1")
	_, err := x.Eval(map[string]any{})
	if _, ok := err.(*UnresolvedError); !ok {
		t.Fatalf("unresolved: %v", err)
	}
	x, _ = Compile("${mode}")
	_, err = x.Eval(map[string]any{"mode": "yes"})
	if err == nil || !strings.Contains(err.Error(), "not true or false") {
		t.Fatalf("non-bool: %v", err)
	}
	x, _ = Compile("${m} > 1")
	_, err = x.Eval(map[string]any{"m": map[string]any{}})
	if err == nil || strings.Contains(err.Error(), "_pflow_v") {
		t.Fatalf("dict compare: %v", err)
	}
}

func TestConstant(t *testing.T) {
	x, _ := Compile("1 > 2")
	if v, c := x.Constant(); !c || v {
		t.Fatalf("1 > 2: %v %v", v, c)
	}
	x, _ = Compile("${a} > 2")
	if _, c := x.Constant(); c {
		t.Fatal("a condition with data is not constant")
	}
}

func BenchmarkEval(b *testing.B) {
	x, _ := Compile("${count.stdout} > 0 and ${mode} == \"full\"")
	root := map[string]any{"count": map[string]any{"stdout": "12\n"}, "mode": "full"}
	for b.Loop() {
		if ok, err := x.Eval(root); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
