package runs

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
)

// write encodes one event and writes it to steps.jsonl before it returns:
// a line is on disk (in the file, not flushed to the device; see
// docs/runs.md) once the step's Begin or End has returned, so a process
// killed at any point leaves every event of what it finished. Events are
// written one at a time, in the order they come. The first event waits for
// the record's files (setup); when they could not be made, or a write
// failed, events are dropped and the run goes on unrecorded.
func (r *Run) write(ev string, rec *runtime.StepRecord, put bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.failed != nil {
		return
	}
	<-r.setupDone
	if r.setupErr != nil {
		return
	}
	r.buf = r.appendEvent(r.buf[:0], r.enc, ev, rec, put)
	if _, err := r.f.Write(r.buf); err != nil {
		r.failed = err
		fmt.Fprintf(r.log, "Warning: could not write the record of run %s (%v); the run goes on, but resuming it may run steps again\n", r.ID, err)
	}
	if cap(r.buf) > 1<<20 {
		r.buf = nil // one huge event: not kept for the next
	}
}

// appendEvent encodes one event as a line; put stores the outputs of an end
// in the step cache too.
func (r *Run) appendEvent(b []byte, enc *encoder, ev string, rec *runtime.StepRecord, put bool) []byte {
	enc.mask = r.opts.Redactor.Masker() // the secrets known now (one lock, not one per string)
	b = append(b, `{"ev":`...)
	b = value.AppendJSONString(b, ev)
	b = append(b, `,"path":`...)
	b = value.AppendJSONString(b, rec.Path)
	b = append(b, `,"node":`...)
	b = value.AppendJSONString(b, rec.NodeID)
	b = append(b, `,"type":`...)
	b = value.AppendJSONString(b, rec.NodeType)
	if rec.Kind != runtime.KindNode && rec.Kind != "" {
		b = append(b, `,"kind":`...)
		b = value.AppendJSONString(b, rec.Kind)
	}
	b = append(b, `,"occ":`...)
	b = strconv.AppendInt(b, int64(rec.Occurrence), 10)
	b = append(b, `,"item":`...)
	b = strconv.AppendInt(b, int64(rec.Item), 10)
	if rec.SafeToRepeat() {
		b = append(b, `,"safe":true`...)
	}
	if ev == evStart {
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, time.Now().UnixMicro(), 10)
		return append(b, "}\n"...)
	}
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, rec.Started.UnixMicro(), 10)
	b = append(b, `,"us":`...)
	b = strconv.AppendInt(b, rec.Duration.Microseconds(), 10)
	b = append(b, `,"status":`...)
	b = value.AppendJSONString(b, rec.Status)
	b = append(b, `,"action":`...)
	b = value.AppendJSONString(b, rec.Action)
	if rec.Error != "" {
		b = append(b, `,"error":`...)
		b = value.AppendJSONString(b, enc.mask.String(rec.Error))
	}
	if rec.Attempts > 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(rec.Attempts), 10)
	}
	if rec.Kind == runtime.KindNode {
		if put {
			r.digest(rec) // the cache key needs them
		}
		def := rec.DefinitionHash
		if def == "" {
			def = r.definition(rec)
		}
		b = append(b, `,"def":"`...)
		b = append(b, def...) // hex: nothing to escape
		b = append(b, '"')
		switch {
		case rec.ParamsHash != "":
			b = append(b, `,"params":"`...)
			b = append(b, rec.ParamsHash...)
			b = append(b, '"')
		case rec.Params != nil:
			b = append(b, `,"params":"`...)
			b = r.h.AppendParams(b, rec.Params, rec.TemplateEnv, rec.WorkflowDir)
			b = append(b, '"')
		}
		if rec.InputHash == "" && rec.Fingerprint != "" {
			rec.InputHash = r.h.Strings(rec.Fingerprint)
		}
		if rec.InputHash != "" {
			b = append(b, `,"input":"`...)
			b = append(b, rec.InputHash...)
			b = append(b, '"')
		}
	}
	if rec.Source != "" {
		b = append(b, `,"source":`...)
		b = value.AppendJSONString(b, rec.Source)
		if rec.SourceRun != "" {
			b = append(b, `,"from":`...)
			b = value.AppendJSONString(b, rec.SourceRun)
		}
	}
	if rec.Batch != nil {
		b = append(b, `,"batch":`...)
		b = enc.value(b, rec.Batch.Value(batchErrorsKept, false)) // the first failed items
	}
	if rec.Outputs != nil {
		b = append(b, `,"out":`...)
		start := len(b)
		enc.changed = false
		b = enc.value(b, rec.Outputs)
		why := ""
		switch {
		case enc.changed:
			why = "its outputs hold a secret value, which is never written"
		case len(b)-start > MaxOutputBytes:
			why = fmt.Sprintf("its outputs are larger than %d MiB", MaxOutputBytes>>20)
			b = enc.value(b[:start], bounded(rec.Outputs, previewString))
		}
		if why == "" && rec.Kind == runtime.KindNode {
			if put {
				r.cachePut(rec, b[start:])
			}
			b = append(b, `,"full":true`...)
		} else if why != "" {
			b = append(b, `,"why":`...)
			b = value.AppendJSONString(b, why)
		}
	}
	return append(b, "}\n"...)
}

func (r *Run) cachePut(rec *runtime.StepRecord, out []byte) {
	info := map[string]string{"node_type": rec.NodeType, "step": rec.Path, "workflow": r.Meta.Workflow.Name, "run": r.ID}
	if err := r.opts.Cache.Put(r.cacheKey(rec), out, rec.Action, r.cacheTTL(rec), info); err != nil {
		fmt.Fprintf(r.log, "Warning: could not store step '%s' in the step cache: %v\n", rec.Path, err)
	}
}

func decodeOutputs(b []byte) map[string]any {
	ev := Event{Out: b}
	return ev.Outputs()
}
