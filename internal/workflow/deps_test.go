package workflow

import (
	"reflect"
	"testing"
)

// StepDeps are the steps a step reads (templates, then input mappings, each
// once, itself and unknown names left out); WaitsFor adds what after names.
func TestStepDepsAndWaitsFor(t *testing.T) {
	w := &Workflow{
		Nodes: []*Node{
			{ID: "a", Type: "echo"},
			{ID: "b", Type: "echo"},
			{ID: "c", Type: "echo", Params: map[string]any{"v": "${b.out} ${a.out} ${b.x} ${c.self} ${input}", "after": []any{"a", "b", "gone"}}},
			{ID: "d", Type: "echo", Params: map[string]any{"after": "a"}},
			nil,
		},
		Mappings: map[string]*Mapping{"d": {InputMappings: map[string]string{"y": "${c.out}", "x": "b.list[0]"}}},
	}
	deps := w.StepDeps()
	if want := map[string][]string{"a": nil, "b": nil, "c": {"b", "a"}, "d": {"b", "c"}}; !reflect.DeepEqual(deps, want) {
		t.Errorf("StepDeps = %v, want %v", deps, want)
	}
	waits := w.WaitsFor()
	if want := map[string][]string{"a": nil, "b": nil, "c": {"b", "a"}, "d": {"b", "c", "a"}}; !reflect.DeepEqual(waits, want) {
		t.Errorf("WaitsFor = %v, want %v", waits, want)
	}
}
