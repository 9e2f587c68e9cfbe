package app

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The record of a parallel run shows its independent steps overlapping:
// each started before any of the others ended. The steps meet at a
// file-based barrier (each leaves a mark and waits for the other two), so
// run one at a time they would fail.
func TestParallelRunRecordShowsOverlappingSteps(t *testing.T) {
	a, _ := testApp(t)
	dir := t.TempDir()
	marks := filepath.Join(dir, "marks")
	os.Mkdir(marks, 0o755)
	step := func(id string) string {
		return fmt.Sprintf("### %s\nMeet the others.\n- type: shell\n- command: touch \"${marks}/%s\"; i=0; while [ $(ls \"${marks}\" | wc -l) -lt 3 ]; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.05; done; echo %s\n\n", id, id, id)
	}
	wf := filepath.Join(dir, "meet.pflow.md")
	os.WriteFile(wf, []byte("# Meet\nThree steps that meet.\n\n## Inputs\n\n### marks\nWhere to leave marks.\n- type: string\n\n## Steps\n- parallel: true\n\n"+
		step("a")+step("b")+step("c")+"### join\nJoin.\n- type: shell\n- command: printf '%s %s %s' ${a.stdout} ${b.stdout} ${c.stdout}\n\n## Outputs\n\n### joined\nAll three.\n- source: ${join.stdout}\n"), 0o644)
	out := runFile(t, a, wf, map[string]any{"marks": marks}, nil)
	if !out.Result.Success() || out.Result.Outputs["joined"] != "a b c" {
		t.Fatalf("run: %+v %v", out.Result.Failure, out.Result.Outputs)
	}
	d, err := a.ShowRun(out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var latestStart, earliestEnd time.Time
	n := 0
	for _, s := range d.Steps {
		if s.Path == "join" {
			continue
		}
		n++
		end := s.Started.Add(time.Duration(s.DurationMS * float64(time.Millisecond)))
		if s.Started.After(latestStart) {
			latestStart = s.Started
		}
		if earliestEnd.IsZero() || end.Before(earliestEnd) {
			earliestEnd = end
		}
	}
	if n != 3 || !latestStart.Before(earliestEnd) {
		t.Fatalf("steps do not overlap in the record (latest start %v, earliest end %v): %+v", latestStart, earliestEnd, d.Steps)
	}
}
