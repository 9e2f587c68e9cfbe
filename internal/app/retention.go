package app

import (
	"context"
	"fmt"
	"time"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/retention"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/trace"
)

// RetentionPolicy is the retention setting as a policy for retention.Prune
// (the defaults when st is nil).
func RetentionPolicy(st *settings.Settings) retention.Policy {
	r := settings.Default().Retention
	if st != nil {
		r = st.Retention
	}
	return retention.Policy{MaxCount: r.MaxCount, MaxAge: r.MaxAge()}
}

// pruneTraces removes the traces the retention setting no longer keeps.
// It runs after each trace is written; a failure is a warning, never a
// failed run. A long-lived process, which writes a trace for every request,
// prunes after every traceSlack(n)-th one (listing the traces costs more
// than writing one): up to 5% more traces than kept may be there meanwhile.
func (a *App) pruneTraces(st *settings.Settings) {
	pol := RetentionPolicy(st)
	if w := a.Afterwards; w != nil { // on w's goroutine: one at a time
		if w.tracesUnpruned++; w.tracesUnpruned < traceSlack(pol.MaxCount) {
			return
		}
		w.tracesUnpruned = 0
	}
	pol.Recycle = trace.Recycler(a.Paths.Debug)
	if _, err := retention.Prune(a.Paths.Debug, trace.FilePattern, pol, time.Now()); err != nil {
		fmt.Fprintf(a.Log, "Warning: could not remove old traces: %v\n", err)
	}
}

// SetRetention changes the retention setting: a nil field keeps its value.
// It returns the setting as saved.
func (a *App) SetRetention(ctx context.Context, maxCount, maxAgeDays *int) (settings.Retention, error) {
	var out settings.Retention
	err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		r := s.Retention
		if maxCount != nil {
			r.MaxCount = *maxCount
		}
		if maxAgeDays != nil {
			r.MaxAgeDays = *maxAgeDays
		}
		if err := r.Validate(); err != nil {
			return &pferr.Error{Kind: pferr.Usage, Message: err.Error(),
				Hint: "Use 0 for no limit, e.g. pflow settings retention --max-count 100 --max-age-days 0"}
		}
		s.Retention, out = r, r
		return nil
	})
	return out, err
}

// traceSlack is how many traces a long-lived process writes between two
// prunes when maxCount are kept (0: no count limit, pruned by age).
func traceSlack(maxCount int) int {
	if maxCount <= 0 {
		return 20
	}
	return max(1, maxCount/20)
}
