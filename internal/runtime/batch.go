package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// runBatch runs n once per item and writes the batch envelope
// {results, count, success_count, error_count, errors, batch_metadata}.
func (e *executor) runBatch(ctx context.Context, f *frame, n *workflow.Node, step *Step, ev StepEvent) *Failure {
	b := n.Batch
	failf := func(msg string) *Failure {
		e.publish(f, n, map[string]any{"error": msg})
		return &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryException, Message: msg}
	}
	items, err := batchItems(b, f.shared)
	if err != nil {
		return failf(fmt.Sprintf("Batch step '%s': %s", n.ID, err.Error()))
	}
	alias := b.Alias()
	total := len(items)
	results := make([]any, total)
	errs := make([]*BatchError, total)
	attempts := max(b.MaxRetries, 1)
	wait := time.Duration(b.RetryWait * float64(time.Second))
	continueOnError := b.ErrorHandling == "continue"
	limit := b.MaxConcurrent // structure checks keep it in 1..100 when set
	if limit <= 0 {
		limit = 10
	}

	var done atomic.Int64
	var ranAny, resumed, cached, omitted atomic.Int64
	runItem := func(ctx context.Context, i int) bool {
		root := make(map[string]any, len(f.shared)+2)
		for k, v := range f.shared {
			root[k] = v
		}
		root[alias] = items[i]
		root["__index__"] = int64(i)
		var out map[string]any
		var fail *Failure
		for a := 1; ; a++ {
			sub := &Step{Started: time.Now()}
			var rec *StepRecord
			out, rec, fail = e.execNode(ctx, f, n, root, sub, i)
			switch {
			case e.opts.Journal == nil:
			case sub.omitted && fail == nil:
				omitted.Add(1)
			default:
				if rec == nil { // failed before the node could run, or omitted
					rec = e.newRecord(f, n, KindNode, i)
				}
				rec.Outputs = out
				e.finishRecord(rec, sub, fail)
			}
			switch {
			case sub.executed:
				ranAny.Add(1)
			case sub.Source == SourceResumed:
				resumed.Add(1)
			case sub.Source == SourceCache:
				cached.Add(1)
			}
			if fail == nil || fail.Category != CategoryException || a >= attempts || ctx.Err() != nil {
				break
			}
			if !e.opts.Scheduler.Sleep(ctx, wait) {
				break
			}
		}
		r := make(map[string]any, len(out)+1)
		for k, v := range out {
			r[k] = v
		}
		r["item"] = items[i]
		results[i] = r
		if fail != nil {
			errs[i] = &BatchError{Index: i, Item: items[i], Error: fail.Message}
		}
		d := done.Add(1)
		if e.opts.Observer != nil {
			e.opts.Observer.BatchProgress(ev, int(d), total)
		}
		return fail == nil
	}

	if b.Parallel && total > 1 {
		ictx, cancel := context.WithCancel(ctx)
		next := atomic.Int64{}
		e.opts.Scheduler.Parallel(ictx, min(limit, total), func(ictx context.Context) {
			for {
				i := int(next.Add(1) - 1)
				if i >= total || ictx.Err() != nil {
					return
				}
				if !runItem(ictx, i) && !continueOnError {
					cancel() // fail_fast: start no new items
				}
			}
		})
		cancel()
	} else {
		for i := 0; i < total; i++ {
			if ctx.Err() != nil {
				break
			}
			if !runItem(ctx, i) && !continueOnError {
				break
			}
		}
	}

	var errList []any
	var firstErr *BatchError
	success := 0
	summary := &BatchSummary{Total: total, Parallel: b.Parallel}
	for i := 0; i < total; i++ {
		if errs[i] != nil {
			if firstErr == nil {
				firstErr = errs[i]
			}
			errList = append(errList, map[string]any{"index": int64(i), "item": items[i], "error": errs[i].Error})
			summary.Errors = append(summary.Errors, *errs[i])
		} else if results[i] != nil {
			success++
		}
	}
	summary.Success = success
	summary.Failed = len(errList)
	step.Batch = summary
	step.executed = ranAny.Load() > 0
	step.omittedItems = int(omitted.Load())
	if !step.executed {
		if resumed.Load() > 0 {
			step.Source = SourceResumed
		} else if cached.Load() > 0 {
			step.Source = SourceCache
		}
	}
	var errorsOut any
	if len(errList) > 0 {
		errorsOut = errList
	}
	mc, mode := any(nil), "sequential"
	if b.Parallel {
		mc, mode = int64(limit), "parallel"
	}
	out := map[string]any{
		"results":       results,
		"count":         int64(total),
		"success_count": int64(success),
		"error_count":   int64(len(errList)),
		"errors":        errorsOut,
		"batch_metadata": map[string]any{
			"parallel": b.Parallel, "max_concurrent": mc, "max_retries": int64(attempts),
			"retry_wait": b.RetryWait, "execution_mode": mode,
		},
	}
	step.Outputs = map[string]any{"count": int64(total), "success_count": int64(success), "error_count": int64(len(errList))}
	if firstErr != nil && !continueOnError {
		msg := fmt.Sprintf("Batch '%s' failed at item [%d]: %s", n.ID, firstErr.Index, firstErr.Error)
		out["error"] = msg
		e.publish(f, n, out)
		return &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryExecution, Message: msg}
	}
	e.publish(f, n, out)
	if len(errList) > 0 {
		e.mu.Lock()
		f.res.Warnings = append(f.res.Warnings, Warning{NodeID: n.ID, Type: "batch_errors",
			Message: fmt.Sprintf("batch '%s': %d/%d items succeeded, %d failed (error_handling: continue); first error at item [%d]: %s", n.ID, success, total, len(errList), firstErr.Index, firstErr.Error)})
		e.mu.Unlock()
	}
	return nil
}

// batchItems resolves the batch's item list: a template (JSON text holding
// an array is parsed) or an inline array whose elements may be templates.
func batchItems(b *workflow.Batch, root map[string]any) ([]any, error) {
	switch x := b.Items.(type) {
	case []any:
		v, unresolved := template.Resolve(x, root)
		if len(unresolved) > 0 {
			return nil, fmt.Errorf("items reference %s, which is not available. Check that the step producing it ran before this one", strings.Join(unresolved, ", "))
		}
		return v.([]any), nil
	case string:
		v, unresolved := template.Resolve(x, root)
		if len(unresolved) > 0 {
			return nil, fmt.Errorf("items template '%s' could not be resolved (%s). Ensure the referenced node output exists", x, strings.Join(unresolved, ", "))
		}
		if v == nil {
			return nil, fmt.Errorf("items template '%s' resolved to null. Ensure the referenced node output exists", x)
		}
		if s, ok := v.(string); ok {
			if p, ok := value.TryParseContainer(s); ok {
				v = p
			}
		}
		l, ok := v.([]any)
		if !ok {
			err := fmt.Errorf("items must be an array, got %s. Template '%s' resolved to: %s", value.TypeName(v), x, value.Truncate(value.Stringify(v), 200, "..."))
			if s, isText := v.(string); isText && strings.Contains(strings.TrimSpace(s), "\n") {
				// lines of text, as a shell command prints them
				err = fmt.Errorf("%w\nText is not split into items: to run once per line, make the step print a JSON array (append | jq -R . | jq -s . to its command), then batch over it", err)
			}
			return nil, err
		}
		return l, nil
	case nil:
		return nil, fmt.Errorf("batch has no 'items'. Add items: ${previous.output} or an inline list")
	default:
		return nil, fmt.Errorf("items must be a template like ${node.output} or a list, got %s", value.TypeName(x))
	}
}
