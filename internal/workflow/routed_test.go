package workflow

import (
	"reflect"
	"testing"
)

// TestRoutedSteps: a step is routed when it has an edge on any action but
// the default one; default edges (next, the order of steps) route nothing.
func TestRoutedSteps(t *testing.T) {
	w := &Workflow{Edges: []Edge{
		{From: "a", To: "b"},
		{From: "b", To: "c", Action: "default"},
		{From: "b", To: "handle", Action: "error"},
		{From: "c", To: "wait", Action: "rate_limited"},
		{From: "d", To: "e", Action: "done"},
	}}
	want := map[string]bool{"b": true, "c": true, "d": true}
	if got := w.RoutedSteps(); !reflect.DeepEqual(got, want) {
		t.Errorf("RoutedSteps() = %v, want %v", got, want)
	}
	if got := (&Workflow{Edges: []Edge{{From: "a", To: "b"}}}).RoutedSteps(); got != nil {
		t.Errorf("no routed step: got %v, want nil", got)
	}
}
