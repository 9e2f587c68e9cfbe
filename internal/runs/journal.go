package runs

import (
	"context"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/stephash"
)

// Begin implements runtime.Journal: it re-uses the resumed run's outcome of
// an unchanged step whose upstream was re-used, else serves a step cache
// hit, else records that the node starts (a pure node's start is not
// recorded: see derivable).
func (r *Run) Begin(ctx context.Context, rec *runtime.StepRecord) (*runtime.StepRecord, error) {
	cacheable := r.cacheable(rec)
	if r.opts.Resume != nil || cacheable {
		rec.DefinitionHash = r.definition(rec)
	}
	if prior := r.reuse(rec); prior != nil {
		return prior, nil
	}
	if cacheable {
		r.digest(rec)
		if out, action, ok := r.opts.Cache.Get(r.cacheKey(rec)); ok {
			if m := decodeOutputs(out); m != nil {
				return &runtime.StepRecord{Source: runtime.SourceCache, Outputs: m, Action: action}, nil
			}
		}
	}
	// A batch item safe to repeat has no start event: its end is all a
	// resume needs, and an item cut short runs again.
	if !rec.SafeToRepeat() || (rec.Item < 0 && !rec.Effects.Replayed()) {
		r.write(evStart, rec, false)
	}
	return nil, nil
}

// Omits implements runtime.OmittingJournal: a completed batch item of a
// replayed node is not recorded (see derivable), so the runtime need not
// hand it over — unless a resume may re-use items (it needs each item's
// upstream state) or the step cache keeps it.
func (r *Run) Omits(effects node.Effects, cache runtime.CacheSetting) bool {
	return effects.Replayed() && r.opts.Resume == nil && !(r.opts.Cache != nil && cache.Set && cache.On)
}

// derivable reports whether rec's outcome is left out of the record: a
// completed execution of a replayed node (node.Effects.Replayed; or a batch
// of one), which a resume runs again from the outputs of the steps before
// it, recorded or derived in turn, as Temporal replays workflow code and
// records only activities. A failure is recorded (a
// resume names it), and so is an outcome the step cache served or keeps
// (the listing says so; a kept one needs its outputs encoded).
func derivable(rec *runtime.StepRecord, put bool) bool {
	return rec.Effects.Replayed() && !put && rec.Source == runtime.SourceRan && rec.Status == runtime.StatusCompleted &&
		(rec.Kind == runtime.KindNode || rec.Kind == runtime.KindBatch)
}

// End implements runtime.Journal: it records the outcome, written before End
// returns.
func (r *Run) End(rec *runtime.StepRecord) {
	defer runtime.ReleaseRecord(rec)
	if rec.Omitted > 0 { // completed items of a replayed node (Omits)
		r.ran.Add(int64(rec.Omitted))
		r.derived.Add(int64(rec.Omitted))
	}
	if rec.Kind == runtime.KindNode && rec.Status != runtime.StatusSkipped {
		switch rec.Source {
		case runtime.SourceResumed:
			r.resumed.Add(1)
		case runtime.SourceCache:
			r.cached.Add(1)
		default:
			r.ran.Add(1)
		}
	}
	put := rec.Kind == runtime.KindNode && rec.Source == runtime.SourceRan && rec.Status == runtime.StatusCompleted && r.cacheable(rec)
	if derivable(rec, put) {
		if rec.Kind == runtime.KindNode {
			r.derived.Add(1)
		}
		return
	}
	if rec.Kind == runtime.KindNode {
		// The digests, outside the writer's lock (parallel items compute
		// theirs at once).
		if rec.DefinitionHash == "" {
			rec.DefinitionHash = r.definition(rec)
		}
		r.digest(rec)
	}
	r.write(evEnd, rec, put)
}

// Reuses implements runtime.ReuseJournal: only a resume re-uses outcomes
// that depend on which upstream steps ran (the step cache does not).
func (r *Run) Reuses() bool { return r.opts.Resume != nil }

// reuse returns the resumed run's outcome of rec when it may be re-used: it
// completed with complete outputs, the step is unchanged (definition,
// effective params, input fingerprint) and no step it reads ran in this run.
func (r *Run) reuse(rec *runtime.StepRecord) *runtime.StepRecord {
	prior := r.opts.Resume
	if prior == nil || rec.UpstreamRan {
		return nil
	}
	ev := prior.end(keyOf(rec))
	if ev == nil || ev.Status != runtime.StatusCompleted || !ev.Full || ev.Type != rec.NodeType {
		return nil
	}
	if h := r.h.For(ev.Def); h != r.h {
		// Recorded by an earlier build, with its digests: compared with
		// digests of that kind (this run's record keeps its own).
		if ev.Def != r.definitionWith(h, rec) || ev.Params != h.Params(rec.Params, rec.TemplateEnv, rec.WorkflowDir) ||
			ev.Input != inputDigest(h, rec.Fingerprint) {
			return nil
		}
	} else {
		if ev.Def != rec.DefinitionHash {
			return nil
		}
		r.digest(rec)
		if ev.Params != rec.ParamsHash || ev.Input != rec.InputHash {
			return nil
		}
	}
	out := ev.Outputs()
	if out == nil {
		return nil
	}
	from := prior.RunID
	if ev.Source == runtime.SourceResumed && ev.From != "" {
		from = ev.From
	}
	return &runtime.StepRecord{Source: runtime.SourceResumed, SourceRun: from, Outputs: out, Action: ev.Action}
}

// cacheable reports whether the step cache may serve rec: the cache is on,
// and the step opts in (`cache: true`/a TTL) or its node type is pure and
// caches by default, and the step does not opt out (`cache: false`).
func (r *Run) cacheable(rec *runtime.StepRecord) bool {
	if r.opts.Cache == nil || rec.Kind != runtime.KindNode {
		return false
	}
	if rec.Cache.Set {
		return rec.Cache.On
	}
	return rec.Effects.Pure && rec.Effects.Cache
}

func (r *Run) cacheTTL(rec *runtime.StepRecord) time.Duration {
	if rec.Cache.TTL > 0 {
		return rec.Cache.TTL
	}
	if r.opts.CacheTTL > 0 {
		return r.opts.CacheTTL
	}
	return DefaultCacheTTL
}

// cacheKey is node type and version ⊕ effective params ⊕ input data.
func (r *Run) cacheKey(rec *runtime.StepRecord) string {
	return r.h.Strings("pflow-step-cache/"+FormatVersion, rec.NodeType, r.opts.Version, rec.ParamsHash, rec.InputHash)
}

// digest fills rec's params and input digests (once).
func (r *Run) digest(rec *runtime.StepRecord) {
	if rec.ParamsHash == "" && rec.Params != nil {
		rec.ParamsHash = r.h.Params(rec.Params, rec.TemplateEnv, rec.WorkflowDir)
	}
	if rec.InputHash == "" {
		rec.InputHash = inputDigest(r.h, rec.Fingerprint)
	}
}

// inputDigest is the digest of a step's input fingerprint ("" for none).
func inputDigest(h *stephash.Hasher, fingerprint string) string {
	if fingerprint == "" {
		return ""
	}
	return h.Strings(fingerprint)
}

// definition digests the step as written: its type, params and input
// mappings (not its batch settings or output mappings, which do not change
// what one execution does).
func (r *Run) definition(rec *runtime.StepRecord) string {
	return r.definitionWith(r.h, rec)
}

// definitionWith is definition's digest computed by h (not cached).
func (r *Run) definitionWith(h *stephash.Hasher, rec *runtime.StepRecord) string {
	if rec.Node == nil {
		return ""
	}
	var im map[string]string
	if rec.Mapping != nil {
		im = rec.Mapping.InputMappings
	}
	return h.Definition(rec.Node.Type, rec.Node.Params, im)
}
