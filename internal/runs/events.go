package runs

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
)

// Event is one line of steps.jsonl: a step (or batch item) started or ended.
type Event struct {
	// Ev is "start" or "end".
	Ev   string `json:"ev"`
	Path string `json:"path"`
	Node string `json:"node"`
	Type string `json:"type"`
	// Kind is "" for a node execution, "batch" or "workflow" for a whole step.
	Kind string `json:"kind,omitempty"`
	Occ  int    `json:"occ"`
	// Item is the batch item index, -1 when not an item.
	Item     int    `json:"item"`
	Status   string `json:"status,omitempty"`
	Action   string `json:"action,omitempty"`
	Error    string `json:"error,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	// T is the start time (Unix microseconds), US the duration in µs.
	T  int64 `json:"t"`
	US int64 `json:"us,omitempty"`
	// Digests: the step as written, its effective params, its input fingerprint.
	Def    string `json:"def,omitempty"`
	Params string `json:"params,omitempty"`
	Input  string `json:"input,omitempty"`
	// Safe is set when the node is safe to repeat.
	Safe bool `json:"safe,omitempty"`
	// Out are the outputs; Full says they are complete and unredacted, so
	// a resume may re-use them; Why says why not.
	Out  json.RawMessage `json:"out,omitempty"`
	Full bool            `json:"full,omitempty"`
	Why  string          `json:"why,omitempty"`
	// Source is "resumed" or "cache" when the outcome was re-used, From the
	// run it came from.
	Source string          `json:"source,omitempty"`
	From   string          `json:"from,omitempty"`
	Batch  json.RawMessage `json:"batch,omitempty"`

	seq int
}

const (
	evStart = "start"
	evEnd   = "end"
)

// Started returns the event's start time.
func (e *Event) Started() time.Time { return time.UnixMicro(e.T) }

// Duration returns how long the step took.
func (e *Event) Duration() time.Duration { return time.Duration(e.US) * time.Microsecond }

// Outputs decodes the recorded outputs (nil when none).
func (e *Event) Outputs() map[string]any {
	if len(e.Out) == 0 {
		return nil
	}
	v, err := value.DecodeJSON(e.Out)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

func decodeEvent(line []byte) (*Event, error) {
	ev := &Event{Item: -1}
	if err := json.Unmarshal(line, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// stepKey identifies one execution: a step's path, occurrence and item.
type stepKey struct {
	path      string
	occ, item int
}

func keyOf(r *runtime.StepRecord) stepKey { return stepKey{r.Path, r.Occurrence, r.Item} }

// Log is a run's events, indexed.
type Log struct {
	RunID  string
	Events []*Event
	// Skipped counts lines that could not be read (a torn last line).
	Skipped int
	ends    map[stepKey]*Event
	starts  map[stepKey]*Event
}

func newLog(id string) *Log {
	return &Log{RunID: id, ends: map[stepKey]*Event{}, starts: map[stepKey]*Event{}}
}

func (l *Log) add(ev *Event) {
	ev.seq = len(l.Events)
	l.Events = append(l.Events, ev)
	k := stepKey{ev.Path, ev.Occ, ev.Item}
	if ev.Ev == evStart {
		l.starts[k] = ev
	} else if ev.Kind == "" {
		// An execution ends once, but a batch item that is tried again
		// ends after each failed attempt, and the ends of parallel items
		// are not always written in the order they happened: the completed
		// end (an item's last attempt; nothing runs after it) is the one
		// that counts.
		if prev := l.ends[k]; prev == nil || prev.Status != runtime.StatusCompleted || ev.Status == runtime.StatusCompleted {
			l.ends[k] = ev
		}
	}
}

// End returns the last end event of an execution.
func (l *Log) end(k stepKey) *Event { return l.ends[k] }

// InFlight returns the executions that started and never ended: they were
// running when the run's process stopped. In record order.
func (l *Log) InFlight() []*Event {
	var out []*Event
	for _, ev := range l.Events {
		if ev.Ev != evStart || l.starts[stepKey{ev.Path, ev.Occ, ev.Item}] != ev {
			continue
		}
		if end := l.ends[stepKey{ev.Path, ev.Occ, ev.Item}]; end == nil || end.seq < ev.seq {
			out = append(out, ev)
		}
	}
	return out
}

// NotReusable returns the completed executions whose outputs could not be
// recorded in full (too large, or holding a secret): a resume must run them
// again.
func (l *Log) NotReusable() []*Event {
	var out []*Event
	for _, ev := range l.Events {
		if ev.Ev == evEnd && ev.Kind == "" && ev.Status == runtime.StatusCompleted && !ev.Full && l.ends[stepKey{ev.Path, ev.Occ, ev.Item}] == ev {
			out = append(out, ev)
		}
	}
	return out
}

const sourceRan = "ran"

// count counts node executions that ended with the given source ("ran" for
// those that ran).
func (l *Log) count(source string) int {
	n := 0
	for _, ev := range l.Events {
		if ev.Ev == evEnd && ev.Kind == "" && (ev.Source == source || (source == sourceRan && ev.Source == "")) {
			n++
		}
	}
	return n
}

// Label names an execution for messages: "'fetch'", "item 3 of 'each'".
func (e *Event) Label() string {
	if e.Item >= 0 {
		return "item " + strconv.Itoa(e.Item) + " of '" + e.Path + "'"
	}
	return "'" + e.Path + "'"
}
