package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/settings"
)

// The recording overhead target of "Durable runs" (≤ 5%; see
// docs/decisions.md, "Measured targets") on the
// engine targets' two workloads, through the use-case the CLI and the MCP
// server call (App.Run: inputs, validation, run, record), side by side:
// record=off is --no-record, record=on writes run.json and steps.jsonl with
// every step's (or batch item's) outputs and digests, in a store that holds
// as many runs as retention keeps (fillRunStore). The trace is off in both,
// so the figure is the record's cost alone.
//
//	go test -run '^$' -bench RecordOverhead -benchmem ./internal/app

// batchTenThousand is a 10,000-item parallel batch (max_concurrent 50) of
// the cheap echo node over an input list.
const batchTenThousand = "# Batch\nA big batch.\n\n## Inputs\n\n### list\nThe items.\n- type: array\n\n## Steps\n\n" +
	"### each\nEcho each item.\n- type: echo\n- message: item ${__index__}\n- data: ${item}\n\n" +
	"```yaml batch\nitems: ${list}\nparallel: true\nmax_concurrent: 50\n```\n"

func benchRecordOverhead(b *testing.B, src []byte, params func() map[string]any) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("record=%s", map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
			home := b.TempDir()
			a := New([]string{"PFLOW_HOME=" + home}, nil)
			wf := filepath.Join(b.TempDir(), "bench.pflow.md")
			if err := os.WriteFile(wf, src, 0o644); err != nil {
				b.Fatal(err)
			}
			t, err := a.ResolveTarget(wf)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if on {
				fillRunStore(b, a)
			}
			b.ReportAllocs()
			for b.Loop() {
				out, err := a.Run(ctx, RunRequest{Target: t, Params: params(), NoTrace: true, NoRecord: !on})
				if err != nil || out.Result == nil || !out.Result.Success() {
					b.Fatalf("run: %v %+v %+v", err, out.InputErrors, out.ValidationErrors)
				}
				if on != (out.RunID != "") {
					b.Fatalf("record=%v but run id %q", on, out.RunID)
				}
			}
			b.StopTimer()
			os.RemoveAll(filepath.Join(home, "runs")) // keep retention pruning out of later rounds
		})
	}
}

// fillRunStore is testutil/homefill.Runs without traces (this package's
// own tests cannot import it): as many runs as retention keeps, untimed,
// so each new run's record replaces the oldest (runs/spare.go).
func fillRunStore(b *testing.B, a *App) {
	b.Helper()
	wf := filepath.Join(b.TempDir(), "one.pflow.md")
	os.WriteFile(wf, []byte("# One\nOne step.\n\n## Steps\n\n### s\nEcho.\n- type: echo\n- message: hi\n"), 0o644)
	t, err := a.ResolveTarget(wf)
	if err != nil {
		b.Fatal(err)
	}
	for range settings.DefaultRetentionCount + 1 {
		if out, err := a.Run(context.Background(), RunRequest{Target: t, NoTrace: true}); err != nil || !out.Result.Success() {
			b.Fatalf("fill: %v", err)
		}
	}
}

// BenchmarkRecordOverhead1000 is the 1,000-step chain of the engine target.
func BenchmarkRecordOverhead1000(b *testing.B) {
	benchRecordOverhead(b, thousandSteps(), func() map[string]any { return map[string]any{"seed": "x"} })
}

// BenchmarkRecordOverheadBatch10000 is the 10,000-item batch of the engine target.
func BenchmarkRecordOverheadBatch10000(b *testing.B) {
	items := make([]any, 10000)
	for i := range items {
		items[i] = int64(i)
	}
	benchRecordOverhead(b, []byte(batchTenThousand), func() map[string]any { return map[string]any{"list": items} })
}

// resumeWorkflow is 20 steps; the last is a shell step that fails until
// the flag file exists (a flaky dependency, fixed before the resume).
func resumeWorkflow(steps int) []byte {
	var b strings.Builder
	b.WriteString("# Resume\nFails at the end until the flag exists.\n\n## Inputs\n\n### flag\nThe flag file.\n- type: string\n\n## Steps\n")
	for i := 1; i < steps; i++ {
		fmt.Fprintf(&b, "\n### s%d\nStep %d.\n- type: echo\n- message: step %d\n", i, i, i)
	}
	b.WriteString("\n### last\nNeeds the flag.\n- type: shell\n- command: test -f \"${flag}\" && echo done\n")
	b.WriteString("\n## Outputs\n\n### out\nThe end.\n- source: ${last.stdout}\n")
	return []byte(b.String())
}

// BenchmarkResumeOneStep times `pflow --resume` of a 20-step run that failed
// at its last step (target: ≤ 1.5× running that step alone), and
// step=alone a 1-step workflow holding the same step, both through App.Run
// with their records (the failed run before each resume is untimed).
func BenchmarkResumeOneStep(b *testing.B) {
	for _, c := range []struct {
		name  string
		steps int
	}{{"resume=1-of-20", 20}, {"step=alone", 1}} {
		b.Run(c.name, func(b *testing.B) {
			a := New([]string{"PFLOW_HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
			dir := b.TempDir()
			wf := filepath.Join(dir, "resume.pflow.md")
			flag := filepath.Join(dir, "flag")
			if err := os.WriteFile(wf, resumeWorkflow(c.steps), 0o644); err != nil {
				b.Fatal(err)
			}
			t, err := a.ResolveTarget(wf)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			params := map[string]any{"flag": flag}
			for b.Loop() {
				req := RunRequest{Target: t, Params: params, NoTrace: true}
				if c.steps > 1 {
					b.StopTimer()
					os.Remove(flag)
					out, err := a.Run(ctx, req)
					if err != nil || out.Result.Success() {
						b.Fatalf("the first run must fail at its last step: %v", err)
					}
					os.WriteFile(flag, nil, 0o644)
					req = RunRequest{Target: t, NoTrace: true, Resume: out.RunID}
					b.StartTimer()
				} else {
					os.WriteFile(flag, nil, 0o644)
				}
				out, err := a.Run(ctx, req)
				if err != nil || out.Result == nil || !out.Result.Success() {
					b.Fatalf("run: %v %+v", err, out)
				}
			}
		})
	}
}
