package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
)

// maxRecordBytes bounds the records a run reports for a resume: they travel
// in its result and in the resuming run's input, both under Temporal's
// payload limit (2 MB by default).
const maxRecordBytes = 1 << 20

// journal is the step boundary of a Temporal run (runtime.Journal): it
// keeps every completed node execution for a later resume, and on a resume
// re-uses the prior run's executions that are unchanged. It lives in
// workflow code: it decides only from what the run sent and what the
// engine computed, so a replay decides the same.
type journal struct {
	prior   map[string]wire.Record
	from    string
	records []wire.Record
}

func newJournal(in wire.RunInput) *journal {
	j := &journal{from: in.ResumedFrom}
	if len(in.Resume) > 0 {
		j.prior = make(map[string]wire.Record, len(in.Resume))
		for _, r := range in.Resume {
			j.prior[r.Key()] = r
		}
	}
	return j
}

// Reuses is true on a resume: the engine then works out which steps read
// from steps that ran again (StepRecord.UpstreamRan).
func (j *journal) Reuses() bool { return j.prior != nil }

func (j *journal) Begin(_ context.Context, rec *runtime.StepRecord) (*runtime.StepRecord, error) {
	if j.prior == nil || rec.Kind != runtime.KindNode || rec.UpstreamRan {
		return nil, nil
	}
	p, ok := j.prior[recordKey(rec)]
	if !ok || p.Digest != digest(rec) {
		return nil, nil
	}
	return &runtime.StepRecord{Outputs: wire.MapOf(p.Outputs), Action: p.Action, Source: runtime.SourceResumed, SourceRun: j.from}, nil
}

func (j *journal) End(rec *runtime.StepRecord) {
	if rec.Kind != runtime.KindNode || rec.Status != runtime.StatusCompleted {
		return
	}
	j.records = append(j.records, wire.Record{Path: rec.Path, Occurrence: rec.Occurrence, Item: rec.Item, Digest: digest(rec),
		Action: rec.Action, Outputs: wire.Value{V: rec.Outputs}})
}

// report returns the records to keep with the run's result, or nil (with
// why) when they are too large to travel.
func (j *journal) report() ([]wire.Record, string) {
	b, err := json.Marshal(j.records)
	if err != nil {
		return nil, err.Error()
	}
	if len(b) > maxRecordBytes {
		return nil, fmt.Sprintf("this run's completed steps (%d KB of outputs) are too large to keep for a resume on Temporal: a resume runs every step again", len(b)>>10)
	}
	return j.records, ""
}

func recordKey(rec *runtime.StepRecord) string {
	return wire.Record{Path: rec.Path, Occurrence: rec.Occurrence, Item: rec.Item}.Key()
}

// digest identifies what a node execution received: its type, effective
// params, shell-bound template values and directory.
func digest(rec *runtime.StepRecord) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", rec.NodeType, rec.WorkflowDir)
	b, _ := value.MarshalJSON(rec.Params)
	h.Write(b)
	keys := value.SortedKeys(rec.TemplateEnv)
	for _, k := range keys {
		fmt.Fprintf(h, "\x00%s=%s", k, rec.TemplateEnv[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
