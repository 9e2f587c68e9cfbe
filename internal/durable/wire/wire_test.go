package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/runtime"
)

// TestValueKeepsPflowTypes: values cross Temporal as JSON; integers must
// come back as int64 (plain JSON decoding makes them float64, and a step's
// `${x}` would render 3 as 3.0 or fail an integer check).
func TestValueKeepsPflowTypes(t *testing.T) {
	in := map[string]any{"n": int64(3), "f": 2.5, "s": "x", "b": true, "nil": nil,
		"list": []any{int64(1), map[string]any{"deep": int64(-7)}}, "big": int64(1) << 60}
	b, err := json.Marshal(Value{V: in})
	if err != nil {
		t.Fatal(err)
	}
	var out Value
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.V, in) {
		t.Errorf("round trip changed the value:\n got %#v\nwant %#v", out.V, in)
	}
}

func TestKeySealsAndOnlyItOpens(t *testing.T) {
	k, _ := NewKey("one passphrase")
	other, _ := NewKey("another passphrase")
	plain := []byte("sk-live-secret and some params")
	sealed, err := k.Seal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "sk-live") {
		t.Fatal("sealed text holds the plain text")
	}
	if got, err := k.Open(sealed); err != nil || string(got) != string(plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := other.Open(sealed); err == nil {
		t.Error("another key opened the payload")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := k.Open(sealed); err == nil {
		t.Error("a tampered payload opened")
	}
	if k.ID() == other.ID() || k.ID() == "" {
		t.Errorf("key ids %q %q", k.ID(), other.ID())
	}
	if _, err := NewKey("  "); err == nil {
		t.Error("an empty passphrase was accepted")
	}
}

// TestLoadKey: the environment wins; otherwise the key file is created once
// (mode 0600), even by processes racing for it, and read by all.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "temporal.key")
	noEnv := func(string) (string, bool) { return "", false }
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadKey(noEnv, file)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.ID()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("racing loaders got different keys: %v", ids)
		}
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	env := func(k string) (string, bool) { return "from-env", k == KeyEnv }
	k, err := LoadKey(env, file)
	want, _ := NewKey("from-env")
	if err != nil || k.ID() != want.ID() {
		t.Errorf("env key not used: %v", err)
	}
}

// TestReportRoundTrip: a run's result survives the trip through Temporal
// (what the submitter renders is what the engine produced).
func TestReportRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	res := &runtime.Result{Status: runtime.RunDegraded, Outputs: map[string]any{"n": int64(2)}, OutputOrder: []string{"n"},
		Warnings: []runtime.Warning{{NodeID: "a", Type: "handled_error", Message: "m"}},
		Steps: []*runtime.Step{{NodeID: "a", Type: "shell", Status: runtime.StatusCompleted, Action: "default", Duration: time.Second, Started: start,
			Params: map[string]any{"command": "x"}, Outputs: map[string]any{"stdout": "y", "exit_code": int64(0)},
			Batch:    &runtime.BatchSummary{Total: 2, Success: 1, Failed: 1, Errors: []runtime.BatchError{{Index: 1, Item: "b", Error: "e"}}},
			Children: []*runtime.Step{{NodeID: "c", Type: "echo", Status: runtime.StatusCompleted}}}},
		Failure:  &runtime.Failure{NodeID: "a", Category: runtime.CategoryExecution, Message: "boom", Details: map[string]any{"exit_code": int64(3)}},
		LLMCalls: []map[string]any{{"node_id": "a", "tokens": int64(5)}}, Started: start, Duration: 2 * time.Second}
	b, err := json.Marshal(ReportOf(res))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := rep.Result()
	got.Shared = nil
	if !reflect.DeepEqual(got, res) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(res, "", " ")
		t.Errorf("round trip changed the result:\n%s\nwant\n%s", gj, wj)
	}
}

// TestTLSFromEnv: no variable means plain text; a CA or a client pair
// means TLS; half a pair or an unreadable CA is an error naming the
// variable.
func TestTLSFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	if cfg, err := TLSFromEnv(env()); cfg != nil || err != nil {
		t.Errorf("no variables: %v %v", cfg, err)
	}
	if cfg, err := TLSFromEnv(env(TLSEnv, "1", TLSServerNameEnv, "temporal.example")); err != nil || cfg == nil || cfg.ServerName != "temporal.example" || cfg.RootCAs != nil {
		t.Errorf("TLS with system roots: %+v %v", cfg, err)
	}
	if _, err := TLSFromEnv(env(TLSCertEnv, "/x.pem")); err == nil || !strings.Contains(err.Error(), TLSKeyEnv) {
		t.Errorf("half a pair: %v", err)
	}
	if _, err := TLSFromEnv(env(TLSCAEnv, filepath.Join(t.TempDir(), "missing.pem"))); err == nil || !strings.Contains(err.Error(), TLSCAEnv) {
		t.Errorf("missing CA: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o644)
	if _, err := TLSFromEnv(env(TLSCAEnv, bad)); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("bad CA: %v", err)
	}
}
