// Package runs keeps the record of every workflow run under
// $PFLOW_HOME/runs/<id>/ (see docs/decisions.md, "Recorded, resumable runs and
// the step cache") and implements the step boundary
// (runtime.Journal) that writes it, re-uses a resumed run's completed steps
// and consults the step cache.
//
// A run's directory holds:
//
//	run.json       what ran: the workflow's name, file and hash, the inputs
//	               (secret ones only as keyed digests), when, resumed from what
//	workflow.json  the workflow IR as it ran (and workflow.pflow.md, its text)
//	steps.jsonl    one line per event, appended as steps start and finish
//	status.json    how the run ended (absent while it runs, or if it died)
//	run.lock       held while the run (or a resume of it) is in progress
//
// The directory, its lock and files are made beside the run — reserved
// as soon as the run is asked for (reserve.go), or by the record's setup
// goroutine — workflow.* first and run.json last, so a directory that
// has a run.json has the rest (a kill leaves a directory without one, which
// readers skip). run.json and status.json are written atomically (temp file
// + rename). steps.jsonl is append-only: events are whole lines written
// after run.json, so a crash leaves at most a torn last line, which readers
// skip. Each event is written before the step's Begin or End returns: the
// start of a step that may have side effects before it runs, its end before
// the next step starts, so a kill -9 loses at most the step in flight, and
// a resume knows it may have partly run. A completed step of a replayed node
// (echo, switch) is not recorded: a resume runs it again (journal.go).
// A run's directory is a spare when one is there: the emptied directory of
// a run that retention removed, or one made ahead by a long-lived process
// (spare.go, standby.go).
package runs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/stephash"
)

// FormatVersion is the run record format.
const FormatVersion = "1"

// File names inside a run directory.
const (
	metaFile     = "run.json"
	statusFile   = "status.json"
	stepsFile    = "steps.jsonl"
	irFile       = "workflow.json"
	sourceFile   = "workflow.pflow.md"
	lockBase     = "run" // fsutil.LockFile adds ".lock"
	keyFile      = ".digest-key"
	idTimeLayout = "20060102-150405"
)

// Store is the runs directory.
type Store struct {
	Dir string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Open returns the store at dir.
func Open(dir string) *Store { return &Store{Dir: dir} }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Workflow identifies the workflow a run ran.
type Workflow struct {
	// Name is the saved name, the file as given, or the inline workflow's name.
	Name string `json:"name"`
	// Kind is "saved", "file" or "inline".
	Kind string `json:"kind"`
	// Path is the file it was read from ("" for inline).
	Path string `json:"path,omitempty"`
	// Hash is the SHA-256 of the IR as it ran (workflow.json).
	Hash string `json:"hash"`
}

// Workflow kinds.
const (
	KindSaved  = "saved"
	KindFile   = "file"
	KindInline = "inline"
)

// Meta is run.json.
type Meta struct {
	FormatVersion string   `json:"format_version"`
	ID            string   `json:"id"`
	Workflow      Workflow `json:"workflow"`
	// Inputs are the prepared inputs that are not secret (redacted).
	Inputs map[string]any `json:"inputs"`
	// SecretInputs are the secret inputs' keyed digests (never the values).
	SecretInputs map[string]string `json:"secret_inputs,omitempty"`
	// InputSources says where each declared input came from (params, env,
	// settings, default, none).
	InputSources map[string]string `json:"input_sources,omitempty"`
	Started      time.Time         `json:"started"`
	// ResumedFrom is the run this one resumed.
	ResumedFrom string `json:"resumed_from,omitempty"`
	// Origin is the face that started the run ("cli", "mcp").
	Origin string `json:"origin,omitempty"`
	PID    int    `json:"pid"`
	// Options are the run's flags that change what may be re-used.
	Options map[string]bool `json:"options,omitempty"`
}

// Status is status.json, written when the run ends.
type Status struct {
	Status     string    `json:"status"` // runtime.Run* or "interrupted"
	Ended      time.Time `json:"ended"`
	DurationMS float64   `json:"duration_ms"`
	FailedStep string    `json:"failed_step,omitempty"`
	Error      string    `json:"error,omitempty"`
	Category   string    `json:"category,omitempty"`
	// Ran, Resumed and Cached count node executions by source.
	Ran     int `json:"ran"`
	Resumed int `json:"resumed"`
	Cached  int `json:"cached"`
	// Derived counts the completed executions of pure nodes (echo, switch)
	// that the record leaves out: they are among Ran, and a resume runs
	// them again from the recorded outputs before them.
	Derived int `json:"derived,omitempty"`
	// RecordIncomplete says why some events could not be written.
	RecordIncomplete string `json:"record_incomplete,omitempty"`
	TracePath        string `json:"trace_path,omitempty"`
	// WaitingStep and Question are set when the run paused at an ask step
	// (Status "waiting"): the step and what it asks (see answer.go).
	WaitingStep string         `json:"waiting_step,omitempty"`
	Question    *node.Question `json:"question,omitempty"`
}

// Run states shown for runs without a status.json.
const (
	StateRunning = "running"
	StateDied    = "died" // the process stopped without finishing the record (crash, kill -9)
)

// NewID returns a run id: the UTC start time to the microsecond and a
// random suffix (20260512-153012-004521-a1b2), so ids sort by start time.
func NewID(t time.Time) string {
	var b [2]byte
	rand.Read(b[:])
	t = t.UTC()
	return fmt.Sprintf("%s-%06d-%s", t.Format(idTimeLayout), t.Nanosecond()/1000, hex.EncodeToString(b[:]))
}

// validID reports whether id can only name a run directory.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

func (s *Store) dir(id string) string { return filepath.Join(s.Dir, id) }

// Key returns the store's digest key, creating it (0600) on first use. It is
// kept outside every run's directory: digests in records cannot be checked
// against guesses without it.
func (s *Store) Key() ([]byte, error) {
	p := filepath.Join(s.Dir, keyFile)
	if b, err := os.ReadFile(p); err == nil && len(b) >= 32 {
		return b, nil
	}
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, err
	}
	err := fsutil.CreateFileAtomic(p, k[:], 0o600)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", p, err)
	}
	b, err := os.ReadFile(p) // the winner of a concurrent create
	if err != nil || len(b) < 32 {
		return nil, fmt.Errorf("read %s: %v", p, err)
	}
	return b, nil
}

// Resolve turns "last" into the newest run's id and checks that id names a
// recorded run.
func (s *Store) Resolve(ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "last" || ref == "latest" {
		ids, err := s.ids()
		if err != nil {
			return "", err
		}
		// A run killed before its run.json was written is not a run.
		for _, id := range ids {
			if _, err := os.Stat(filepath.Join(s.dir(id), metaFile)); err == nil {
				return id, nil
			}
		}
		return "", pferr.New(pferr.NotFound, "there is no recorded run to resume").WithWhere(s.Dir).
			WithHint("Run a workflow first; every run is recorded under " + s.Dir + ".")
	}
	if !validID(ref) {
		return "", pferr.Newf(pferr.Validation, "%q is not a run id", ref).
			WithHint("Run ids look like 20260512-153012-004521-a1b2, and 'last' names the newest.").
			WithFix(pferr.Fix{Text: "To see the run ids, {do}.", Do: listRuns})
	}
	if _, err := os.Stat(filepath.Join(s.dir(ref), metaFile)); err != nil {
		return "", pferr.Newf(pferr.NotFound, "run '%s' not found", ref).WithWhere(s.dir(ref)).
			WithHint("Old runs are removed by the retention setting.").
			WithFix(pferr.Fix{Text: "To see the recorded runs, {do}.", Do: listRuns})
	}
	return ref, nil
}

// ids lists run ids, newest first.
func (s *Store) ids() ([]string, error) {
	ids, _, err := s.scan()
	return ids, err
}

// scan lists run ids, newest first, and the spares being made that a
// killed process left.
func (s *Store) scan() (ids, stale []string, err error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, pferr.Newf(pferr.Config, "cannot read the runs directory: %v", err).WithWhere(s.Dir)
	}
	for _, e := range ents {
		switch {
		case e.IsDir() && validID(e.Name()):
			ids = append(ids, e.Name())
		case s.staleStandby(e):
			stale = append(stale, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, stale, nil
}

// readJSON decodes path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func writeJSON(path string, v any) error {
	data, err := encodeJSON(v)
	if err != nil {
		return err
	}
	return fsutil.ReplaceFile(path, data, 0o600)
}

// encodeJSON is how the record's JSON files are written (indented).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeMeta encodes run.json on one line: its inputs may be a long list (a
// batch's items), and indenting 10,000 items one per line took 3.1 ms where
// the line takes 0.8 ms. `pflow runs show` prints it readably.
func encodeMeta(m *Meta) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Meta reads a run's run.json.
func (s *Store) Meta(id string) (*Meta, error) {
	var m Meta
	if err := readJSON(filepath.Join(s.dir(id), metaFile), &m); err != nil {
		return nil, pferr.Newf(pferr.NotFound, "run '%s' has no readable record: %v", id, err).WithWhere(s.dir(id))
	}
	return &m, nil
}

// Status reads a run's status.json; nil when the run has not ended (running
// or died; see State).
func (s *Store) Status(id string) *Status {
	var st Status
	if readJSON(filepath.Join(s.dir(id), statusFile), &st) != nil {
		return nil
	}
	return &st
}

// State returns a run's final status, or StateRunning / StateDied for a run
// without one.
func (s *Store) State(id string) string {
	if st := s.Status(id); st != nil {
		return st.Status
	}
	if s.locked(id) {
		return StateRunning
	}
	return StateDied
}

// locked reports whether a process holds the run's lock.
func (s *Store) locked(id string) bool {
	fl := flock.New(filepath.Join(s.dir(id), lockBase+".lock"))
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		fl.Unlock()
		return false
	}
	return true
}

// Lock takes run id's lock without waiting: it fails when the run is still
// in progress or another resume of it is.
func (s *Store) Lock(ctx context.Context, id string) (*fsutil.Lock, error) {
	lk, ok, err := fsutil.TryLockFile(filepath.Join(s.dir(id), lockBase))
	if err != nil {
		return nil, err
	}
	if !ok {
		msg := fmt.Sprintf("run '%s' is in use: it is still running, or another resume of it is in progress", id)
		return nil, pferr.New(pferr.Execution, msg).WithWhere(s.dir(id)).
			WithHint("Wait for it to finish, then resume again. Two resumes of one run never run at once.").
			WithFix(pferr.Fix{Text: "To see its state, {do}.", Do: pferr.PersonOnly("runs")})
	}
	return lk, nil
}

// Summary is one line of 'pflow runs'.
type Summary struct {
	ID          string    `json:"id"`
	Workflow    string    `json:"workflow"`
	Status      string    `json:"status"`
	Started     time.Time `json:"started"`
	DurationMS  float64   `json:"duration_ms,omitempty"`
	FailedStep  string    `json:"failed_step,omitempty"`
	Error       string    `json:"error,omitempty"`
	ResumedFrom string    `json:"resumed_from,omitempty"`
	Ran         int       `json:"ran"`
	Resumed     int       `json:"resumed"`
	Cached      int       `json:"cached"`
	// Question is what a waiting run asks; Answer how it was answered
	// (Status is then "answered").
	Question *node.Question `json:"question,omitempty"`
	Answer   *Answer        `json:"answer,omitempty"`
}

// List returns up to limit runs (0: all), newest first.
func (s *Store) List(limit int) ([]Summary, error) { return s.ListWhere(limit, nil) }

// ListWhere is List of the runs whose record keep accepts (nil: all).
func (s *Store) ListWhere(limit int, keep func(*Meta) bool) ([]Summary, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := []Summary{}
	for _, id := range ids {
		if limit > 0 && len(out) >= limit {
			break
		}
		m, err := s.Meta(id)
		if err != nil {
			continue // a run being created, or a broken directory
		}
		if keep != nil && !keep(m) {
			continue
		}
		out = append(out, s.summary(m))
	}
	return out, nil
}

func (s *Store) summary(m *Meta) Summary {
	sum := Summary{ID: m.ID, Workflow: m.Workflow.Name, Started: m.Started, ResumedFrom: m.ResumedFrom}
	if st := s.Status(m.ID); st != nil {
		sum.Status, sum.DurationMS, sum.FailedStep, sum.Error = st.Status, st.DurationMS, st.FailedStep, st.Error
		sum.Ran, sum.Resumed, sum.Cached = st.Ran, st.Resumed, st.Cached
		if st.Status == StateWaiting {
			sum.Question = st.Question
			if a := s.Answer(m.ID); a != nil {
				sum.Status, sum.Answer = StateAnswered, a
			}
		}
		return sum
	}
	sum.Status = s.State(m.ID)
	if sum.Status == StateDied {
		if log, err := s.Events(m.ID); err == nil {
			if fl := log.InFlight(); len(fl) > 0 {
				sum.FailedStep = fl[0].Path
				sum.Error = "the process stopped while this step was running"
			}
			sum.Ran = log.count(sourceRan)
		}
	}
	return sum
}

// Events reads a run's steps.jsonl. A torn or unreadable line (a crash
// mid-write) is skipped and counted in Log.Skipped.
func (s *Store) Events(id string) (*Log, error) {
	f, err := os.Open(filepath.Join(s.dir(id), stepsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return newLog(id), nil
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "cannot read the record of run '%s': %v", id, err)
	}
	defer f.Close()
	log := newLog(id)
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				log.Skipped++ // the torn last line of a crashed writer
			} else if ev, perr := decodeEvent(line); perr != nil {
				log.Skipped++
			} else {
				log.add(ev)
			}
		}
		if err != nil {
			break
		}
	}
	return log, nil
}

// Workflow reads the IR a run ran (workflow.json) and its text, if kept.
func (s *Store) Workflow(id string) (ir []byte, source []byte) {
	ir, _ = os.ReadFile(filepath.Join(s.dir(id), irFile))
	source, _ = os.ReadFile(filepath.Join(s.dir(id), sourceFile))
	return ir, source
}

// Retention says which runs to keep. Zero fields mean no limit.
type Retention struct {
	// Keep is how many runs to keep (the newest).
	Keep int
	// MaxAge removes runs that started longer ago.
	MaxAge time.Duration
}

// Prune removes runs beyond the policy, oldest first, never one that is in
// progress (locked) nor any named in keep: their directories become spares
// while a slot is free (see spare.go), else are deleted. It returns how
// many it removed.
func (s *Store) Prune(p Retention, keep ...string) (int, error) {
	if p.Keep <= 0 && p.MaxAge <= 0 {
		return 0, nil
	}
	ids, stale, err := s.scan()
	if err != nil {
		return 0, err
	}
	for _, name := range stale {
		os.RemoveAll(filepath.Join(s.Dir, name))
	}
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	cutoff := s.now().Add(-p.MaxAge).UTC().Format(idTimeLayout)
	removed := 0
	for i, id := range ids {
		tooMany := p.Keep > 0 && i >= p.Keep
		tooOld := p.MaxAge > 0 && id < cutoff
		if (!tooMany && !tooOld) || kept[id] {
			continue
		}
		lk, ok, err := fsutil.TryLockFile(filepath.Join(s.dir(id), lockBase))
		if err != nil || !ok {
			continue // in progress
		}
		if s.recycle(id) {
			err = nil // its directory is now a spare, its files empty
		} else {
			err = os.RemoveAll(s.dir(id))
		}
		lk.Unlock()
		if err == nil {
			removed++
		}
	}
	return removed, nil
}

// SplitInputs separates a run's prepared inputs into those kept in its
// record in clear (redacted) and the secret ones, kept only as keyed
// digests: inputs whose name looks secret, or whose value holds a known
// secret.
func SplitInputs(values map[string]any, red *redact.Redactor, key []byte) (public map[string]any, secret map[string]string) {
	h := stephash.New(key)
	public = map[string]any{}
	enc := newEncoder(red)
	for k, v := range values {
		enc.changed = false
		enc.value(nil, map[string]any{k: v})
		if !enc.changed {
			public[k] = v
			continue
		}
		if secret == nil {
			secret = map[string]string{}
		}
		secret[k] = h.Value(v)
	}
	return public, secret
}

// listRuns lists the recorded runs (an agent has the run ids of its results).
var listRuns = &pferr.Action{Command: "runs", Instead: "use the run_id of an earlier workflow_execute result"}
