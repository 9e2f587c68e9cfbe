package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/stephash"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/workflow"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// stepRecord is what the runtime hands the journal for one execution of n.
func stepRecord(n *workflow.Node, item int, effects node.Effects, params map[string]any) *runtime.StepRecord {
	return &runtime.StepRecord{Path: n.ID, NodeID: n.ID, NodeType: n.Type, Kind: runtime.KindNode, Occurrence: 1, Item: item,
		Node: n, Params: params, WorkflowDir: "/wf", Effects: effects}
}

// finish sets the outcome of rec as the runtime does before End.
func finish(rec *runtime.StepRecord, outputs map[string]any) {
	rec.Status, rec.Action, rec.Outputs = runtime.StatusCompleted, "default", outputs
	rec.Started, rec.Duration, rec.Attempts = time.Now(), time.Millisecond, 1
}

// The start of a step that may have side effects is written, with run.json
// before it, by the time Begin returns (the record is created beside the
// run, never after such a step has started); at Close every event, the
// workflow copy and status.json are there, with no temp file left, and the
// digests are the keyed digests resume compares.
func TestRecordOrderAndContent(t *testing.T) {
	s := Open(t.TempDir())
	ir := []byte(`{"ir_version":"0.1.0"}`)
	r, err := s.Create(Options{Meta: Meta{Workflow: Workflow{Name: "wf", Kind: KindFile}}, Key: testKey,
		MakeIR: func() []byte { return ir }, Source: []byte("# wf\n")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	safe := &workflow.Node{ID: "a", Type: "read-file", Params: map[string]any{"file_path": "hi"}}
	recA := stepRecord(safe, -1, node.Effects{ReadOnly: true}, map[string]any{"file_path": "hi"})
	if prior, err := r.Begin(ctx, recA); prior != nil || err != nil {
		t.Fatalf("Begin: %v %v", prior, err)
	}
	finish(recA, map[string]any{"content": "hi"})
	r.End(recA)
	// A pure step is replayed on resume, not recorded.
	pure := &workflow.Node{ID: "p", Type: "echo", Params: map[string]any{"message": "hi"}}
	recP := stepRecord(pure, -1, node.Effects{ReadOnly: true, Idempotent: true, Pure: true}, map[string]any{"message": "hi"})
	if prior, err := r.Begin(ctx, recP); prior != nil || err != nil {
		t.Fatalf("Begin: %v %v", prior, err)
	}
	finish(recP, map[string]any{"echo": "hi"})
	r.End(recP)

	unsafe := &workflow.Node{ID: "b", Type: "shell", Params: map[string]any{"command": "touch x"}}
	recB := stepRecord(unsafe, -1, node.Effects{}, map[string]any{"command": "touch x"})
	if _, err := r.Begin(ctx, recB); err != nil {
		t.Fatal(err)
	}
	// The node would run now: its start (and a listed run) is on disk.
	if _, err := s.Meta(r.ID); err != nil {
		t.Fatalf("run.json is not there when a step with side effects starts: %v", err)
	}
	log, err := s.Events(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fl := log.InFlight(); len(fl) != 1 || fl[0].Path != "b" {
		t.Fatalf("in flight when b starts: %+v", fl)
	}
	finish(recB, map[string]any{"stdout": "ok\n"})
	r.End(recB)
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}

	dir := s.dir(r.ID)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "run.json run.lock status.json steps.jsonl workflow.json workflow.pflow.md" {
		t.Fatalf("run directory holds %s", got)
	}
	m, err := s.Meta(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ir)
	if m.Workflow.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("workflow hash %q, want the SHA-256 of the IR", m.Workflow.Hash)
	}
	if st := s.Status(r.ID); st == nil || st.Status != runtime.RunSuccess || st.Ran != 3 || st.Derived != 1 {
		t.Errorf("status %+v, want 3 ran, 1 of them derived", st)
	}
	log, err = s.Events(r.ID)
	if err != nil || log.Skipped > 0 || len(log.InFlight()) > 0 {
		t.Fatalf("events: %v, skipped %d, in flight %v", err, log.Skipped, log.InFlight())
	}
	for _, ev := range log.Events {
		if ev.Path == "p" {
			t.Fatalf("the pure step is recorded: %+v", ev)
		}
	}
	h := stephash.New(testKey)
	// (The records themselves were given back for reuse after End.)
	for _, c := range []struct {
		n      *workflow.Node
		params map[string]any
	}{{safe, map[string]any{"file_path": "hi"}}, {unsafe, map[string]any{"command": "touch x"}}} {
		ev := log.end(stepKey{c.n.ID, 1, -1})
		if ev == nil || !ev.Full || ev.Status != runtime.StatusCompleted {
			t.Fatalf("end of %s: %+v", c.n.ID, ev)
		}
		if want := h.Definition(c.n.Type, c.n.Params, nil); ev.Def != want {
			t.Errorf("%s: def %s, want %s", c.n.ID, ev.Def, want)
		}
		if want := h.Params(c.params, nil, "/wf"); ev.Params != want {
			t.Errorf("%s: params %s, want %s", c.n.ID, ev.Params, want)
		}
	}
}

// A record whose directory cannot be made (it is found out beside the run)
// does not hold the run up: a step that waits for its start returns, the
// run goes on, a warning says it is not recorded and Close says so.
func TestRecordThatCannotBeCreated(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var log fakemcp.Buffer // written from the record's setup goroutine
	r, err := Open(filepath.Join(file, "runs")).Create(Options{Key: testKey, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	n := &workflow.Node{ID: "b", Type: "shell"}
	for i := 0; i < 3; i++ {
		rec := stepRecord(n, -1, node.Effects{}, map[string]any{"command": "x"})
		rec.Occurrence = i + 1
		if _, err := r.Begin(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		finish(rec, map[string]any{"stdout": ""})
		r.End(rec)
	}
	if err := r.Close(nil, ""); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("Close: %v, want ErrNotRecorded", err)
	}
	if !strings.Contains(log.String(), "this run is not recorded") {
		t.Fatalf("no warning: %q", log.String())
	}
}

// Outputs holding a secret are written redacted and not marked reusable,
// also when they are encoded beside the run.
func TestSecretOutputsAreNotReusable(t *testing.T) {
	s := Open(t.TempDir())
	red := redact.NewRedactor()
	red.AddSecret("API_TOKEN", "s3cr3t-value")
	r, err := s.Create(Options{Key: testKey, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	n := &workflow.Node{ID: "a", Type: "read-file"}
	rec := stepRecord(n, 0, node.Effects{ReadOnly: true}, map[string]any{"file_path": "x"})
	finish(rec, map[string]any{"content": "token s3cr3t-value"})
	r.End(rec)
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(s.dir(r.ID), stepsFile))
	if bytes.Contains(data, []byte("s3cr3t-value")) {
		t.Fatalf("secret written: %s", data)
	}
	log, _ := s.Events(r.ID)
	if ev := log.end(stepKey{"a", 1, 0}); ev == nil || ev.Full || ev.Why == "" {
		t.Fatalf("end event %+v: want not reusable", ev)
	}
}

// A prepared run is not listed until it starts; aborted, it leaves nothing.
func TestPreparedRunAborted(t *testing.T) {
	s := Open(t.TempDir())
	r, err := s.Prepare(Options{Key: testKey, MakeIR: func() []byte { return []byte("{}") }})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := s.List(0); len(l) != 0 {
		t.Fatalf("a prepared run is listed: %+v", l)
	}
	r.Abort()
	if _, err := os.Stat(s.dir(r.ID)); !os.IsNotExist(err) {
		t.Fatalf("an aborted run's directory is left: %v", err)
	}
}

// A run recorded by an earlier build holds HMAC-SHA256 digests: resuming it
// compares digests of that kind, so its unchanged steps are still re-used
// and a changed one is not.
func TestResumeRecordOfEarlierBuild(t *testing.T) {
	s := Open(t.TempDir())
	legacy := stephash.New(testKey).Legacy()
	n := &workflow.Node{ID: "a", Type: "echo", Params: map[string]any{"message": "${x}"}}
	params := map[string]any{"message": "hi"}
	line := fmt.Sprintf(`{"ev":"end","path":"a","node":"a","type":"echo","occ":1,"item":-1,"safe":true,"t":1,"us":1,"status":"completed","action":"default","def":%q,"params":%q,"out":{"echo":"hi"},"full":true}`+"\n",
		legacy.Definition("echo", n.Params, nil), legacy.Params(params, nil, "/wf"))
	dir := filepath.Join(s.Dir, "20250101-000000-000000-abcd")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, stepsFile), []byte(line), 0o600)
	log, err := s.Events("20250101-000000-000000-abcd")
	if err != nil || len(log.Events) != 1 {
		t.Fatalf("events: %v %+v", err, log)
	}
	r, err := s.Create(Options{Key: testKey, Resume: log})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(nil, "")
	prior, err := r.Begin(context.Background(), stepRecord(n, -1, node.Effects{Pure: true}, map[string]any{"message": "hi"}))
	if err != nil || prior == nil || prior.Source != runtime.SourceResumed || prior.Outputs["echo"] != "hi" {
		t.Fatalf("unchanged step of an earlier build's record: %+v %v, want it re-used", prior, err)
	}
	prior, err = r.Begin(context.Background(), stepRecord(n, -1, node.Effects{Pure: true}, map[string]any{"message": "changed"}))
	if err != nil || prior != nil {
		t.Fatalf("changed params: %+v %v, want the step run again", prior, err)
	}
}

// Many batch items ending at once from many goroutines: every item's end is
// recorded once, whole, with its own outputs and digest.
func TestManyItemsEndingAtOnce(t *testing.T) {
	s := Open(t.TempDir())
	r, err := s.Create(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	n := &workflow.Node{ID: "each", Type: "echo", Params: map[string]any{"message": "${item}"}}
	const workers, per = 8, 1500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * per; i < (w+1)*per; i++ {
				rec := stepRecord(n, i, node.Effects{ReadOnly: true}, map[string]any{"message": fmt.Sprint("item ", i)})
				finish(rec, map[string]any{"echo": fmt.Sprint("item ", i)})
				r.End(rec)
			}
		}()
	}
	wg.Wait()
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}
	log, err := s.Events(r.ID)
	if err != nil || log.Skipped > 0 || len(log.Events) != workers*per {
		t.Fatalf("events: %v, skipped %d, %d of %d", err, log.Skipped, len(log.Events), workers*per)
	}
	h := stephash.New(testKey)
	for i := 0; i < workers*per; i++ {
		ev := log.end(stepKey{"each", 1, i})
		want := fmt.Sprint("item ", i)
		if ev == nil || !ev.Full || ev.Outputs()["echo"] != want || ev.Params != h.Params(map[string]any{"message": want}, nil, "/wf") {
			t.Fatalf("item %d: %+v", i, ev)
		}
	}
}

// A batch item tried again ends once per attempt; whatever order the ends
// were written in, its completed end is the one a resume sees.
func TestItemEndsOutOfOrder(t *testing.T) {
	failed := `{"ev":"end","path":"each","node":"each","type":"echo","occ":1,"item":3,"t":1,"status":"failed","action":"error","error":"boom"}` + "\n"
	done := `{"ev":"end","path":"each","node":"each","type":"echo","occ":1,"item":3,"t":2,"status":"completed","action":"default","out":{"echo":"x"},"full":true}` + "\n"
	for _, order := range [][]string{{failed, done}, {done, failed}} {
		s := Open(t.TempDir())
		dir := filepath.Join(s.Dir, "20250101-000000-000000-abcd")
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, stepsFile), []byte(strings.Join(order, "")), 0o600)
		log, err := s.Events("20250101-000000-000000-abcd")
		if err != nil {
			t.Fatal(err)
		}
		if ev := log.end(stepKey{"each", 1, 3}); ev == nil || ev.Status != runtime.StatusCompleted || len(log.NotReusable()) != 0 {
			t.Fatalf("order %q: end %+v", order[0][:40], ev)
		}
	}
}

// Steps with side effects beside a parallel batch of read-only items: each
// start is on disk when Begin returns, each end when End returns, and the
// record holds every event once, whole.
func TestStepsThatWaitBesideABatch(t *testing.T) {
	s := Open(t.TempDir())
	r, err := s.Create(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	item := &workflow.Node{ID: "each", Type: "echo", Params: map[string]any{"message": "${item}"}}
	const items, steps = 1000, 20
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < items; i += 2 {
				rec := stepRecord(item, i, node.Effects{ReadOnly: true}, map[string]any{"message": fmt.Sprint("item ", i)})
				finish(rec, map[string]any{"echo": fmt.Sprint("item ", i)})
				r.End(rec)
			}
		}()
	}
	ctx := context.Background()
	for i := 0; i < steps; i++ {
		n := &workflow.Node{ID: fmt.Sprintf("s%d", i), Type: "shell", Params: map[string]any{"command": "touch x"}}
		rec := stepRecord(n, -1, node.Effects{}, map[string]any{"command": "touch x"})
		if _, err := r.Begin(ctx, rec); err != nil {
			t.Fatal(err)
		}
		log, _ := s.Events(r.ID)
		if fl := log.InFlight(); len(fl) != 1 || fl[0].Path != n.ID {
			t.Fatalf("step %s started: in flight on disk %+v", n.ID, fl)
		}
		finish(rec, map[string]any{"stdout": n.ID})
		r.End(rec)
		log, _ = s.Events(r.ID)
		if ev := log.end(stepKey{n.ID, 1, -1}); ev == nil || len(log.InFlight()) != 0 {
			t.Fatalf("step %s ended: its end is not on disk (%+v)", n.ID, ev)
		}
	}
	wg.Wait()
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}
	log, err := s.Events(r.ID)
	if err != nil || log.Skipped > 0 || len(log.Events) != items+2*steps {
		t.Fatalf("events: %v, skipped %d, %d of %d", err, log.Skipped, len(log.Events), items+2*steps)
	}
	for i := 0; i < items; i++ {
		if ev := log.end(stepKey{"each", 1, i}); ev == nil || ev.Outputs()["echo"] != fmt.Sprint("item ", i) {
			t.Fatalf("item %d: %+v", i, ev)
		}
	}
}
