package settings

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// LoadShared decodes a settled version of settings.json once (and says
// what is wrong with it once), reads a new version when the file changes,
// and gives one defaults value while the file is missing.
func TestLoadShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if a, b := mustShared(t, path, nil), mustShared(t, path, nil); a != b || a.Retention.MaxCount != DefaultRetentionCount {
		t.Fatalf("missing file: %p %p %+v", a, b, a)
	}
	os.WriteFile(path, []byte(`{"env": {"API_TOKEN": "first-secret"}}`), 0o644)
	time.Sleep(1100 * time.Millisecond) // a version is remembered once a second old (fsutil.Memo)
	var first, second bytes.Buffer
	a, b := mustShared(t, path, &first), mustShared(t, path, &second)
	if a != b || a.Env["API_TOKEN"] != "first-secret" {
		t.Fatalf("unchanged file decoded twice or wrong: %p %p %+v", a, b, a.Env)
	}
	if !strings.Contains(first.String(), "chmod 600") || second.Len() != 0 {
		t.Fatalf("the warning was not said once: %q then %q", first.String(), second.String())
	}
	os.WriteFile(path, []byte(`{"env": {"API_TOKEN": "other-secret"}}`), 0o600)
	if c := mustShared(t, path, nil); c == a || c.Env["API_TOKEN"] != "other-secret" {
		t.Fatalf("the changed file was not read: %+v", c.Env)
	}
}

func mustShared(t *testing.T, path string, log *bytes.Buffer) *Settings {
	t.Helper()
	var w bytes.Buffer
	if log == nil {
		log = &w
	}
	s, err := LoadShared(path, log)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
