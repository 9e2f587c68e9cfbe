package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil/fsutiltest"
)

func TestLoadMissingGivesDefaults(t *testing.T) {
	s, err := Load(filepath.Join(t.TempDir(), "settings.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Runtime.TemplateResolutionMode != "strict" || s.Registry.OutputMode != "smart" {
		t.Fatalf("defaults not applied: %+v", s)
	}
	if fmt.Sprint(s.Registry.Nodes.Allow) != "[*]" || len(s.Registry.Nodes.Deny) != 2 {
		t.Fatalf("default filter = %+v", s.Registry.Nodes)
	}
}

func TestLoadCorruptWarnsAndUsesDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte("{\n  \"env\": {\"A\": 1,\n"), 0o600)
	var log bytes.Buffer
	s, err := Load(p, &log)
	if err != nil {
		t.Fatal(err)
	}
	if s.Runtime.TemplateResolutionMode != "strict" {
		t.Fatal("defaults not used")
	}
	if !strings.Contains(log.String(), "Warning") || !strings.Contains(log.String(), p) || !strings.Contains(log.String(), "line") {
		t.Fatalf("warning should name the file and line: %q", log.String())
	}
	// Update refuses to clobber the broken file.
	err = Update(context.Background(), p, func(s *Settings) error { s.Env["B"] = "x"; return nil })
	if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("Update on corrupt file: %v", err)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), `"A": 1`) {
		t.Fatal("corrupt file was overwritten")
	}
}

func TestLoadWarnsAboutReadableSecrets(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte(`{"env":{"OPENAI_API_KEY":"sk-123456"}}`), 0o644)
	os.Chmod(p, 0o644)
	var log bytes.Buffer
	if _, err := Load(p, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Run: chmod 600 "+p) {
		t.Fatalf("want chmod hint, got %q", log.String())
	}
	if strings.Contains(log.String(), "sk-123456") {
		t.Fatal("secret leaked into warning")
	}
}

func TestUpdateWrites0600AndKeepsOtherKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	ctx := context.Background()
	if err := Update(ctx, p, func(s *Settings) error { s.Env["K"] = "v"; s.LLM.DefaultModel = "gpt-4o"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := Update(ctx, p, func(s *Settings) error { s.Registry.Nodes.Deny = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %o, want 600", st.Mode().Perm())
	}
	s, _ := Load(p, nil)
	if s.Env["K"] != "v" || s.LLM.DefaultModel != "gpt-4o" || len(s.Registry.Nodes.Deny) != 0 {
		t.Fatalf("round trip lost data: %+v", s)
	}
	if err := Update(ctx, p, func(s *Settings) error { s.Env["X"] = "y"; return fmt.Errorf("abort") }); err == nil {
		t.Fatal("fn error not returned")
	}
	if s, _ := Load(p, nil); s.Env["X"] != "" {
		t.Fatal("aborted update was written")
	}
}

func TestUpdateKeepsUnknownTopLevelKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte(`{"version":"1.0.0","skills":{"dir":"x"},"env":{"A":"1"}}`), 0o600)
	if err := Update(context.Background(), p, func(s *Settings) error { delete(s.Env, "A"); return nil }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), `"skills"`) {
		t.Fatalf("unknown key dropped:\n%s", data)
	}
	if strings.Contains(string(data), `"A"`) {
		t.Fatalf("deleted env key resurrected:\n%s", data)
	}
}

func TestLookupEnvCaseInsensitive(t *testing.T) {
	s := Default()
	s.Env["OpenAI_Api_Key"] = "sk-1"
	s.Env["exact"] = "e"
	s.Env["EXACT"] = "E"
	for _, tc := range []struct{ key, want string }{{"OPENAI_API_KEY", "sk-1"}, {"openai_api_key", "sk-1"}, {"exact", "e"}, {"EXACT", "E"}} {
		if v, ok := s.LookupEnv(tc.key); !ok || v != tc.want {
			t.Errorf("LookupEnv(%q) = %q,%v want %q", tc.key, v, ok, tc.want)
		}
	}
	if _, ok := s.LookupEnv("MISSING"); ok {
		t.Error("missing key found")
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"sk-abcdef": "sk-***", "abc": "***", "": "***", "abcd": "abc***"} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q want %q", in, got, want)
		}
	}
}

func TestNodeFilterPrecedence(t *testing.T) {
	gitLog := Candidates("git-log", "git", "", "")
	shell := Candidates("shell", "shell", "", "")
	gh := Candidates("mcp-github-create-issue", "", "github", "create_issue")
	tests := []struct {
		name        string
		allow, deny []string
		cands       []string
		want        bool
		reason      string
	}{
		{"default deny hides git", []string{"*"}, DefaultDeny, gitLog, false, "deny pattern 'pflow.nodes.git.*'"},
		{"default allows shell", []string{"*"}, DefaultDeny, shell, true, "allow pattern '*'"},
		{"exact allow beats default deny", []string{"*", "git-log"}, DefaultDeny, gitLog, true, "allow pattern 'git-log'"},
		{"same glob in both: deny wins", []string{"*", "pflow.nodes.git.*"}, DefaultDeny, gitLog, false, "deny wins"},
		{"more specific allow beats broad deny", []string{"pflow.nodes.git.*"}, []string{"pflow.nodes.*"}, gitLog, true, "more specific"},
		{"exact deny beats glob allow", []string{"*"}, []string{"shell"}, shell, false, "deny pattern 'shell'"},
		{"no match excluded", []string{"read-*"}, nil, shell, false, "no allow pattern"},
		{"mcp server glob deny", []string{"*"}, []string{"mcp-github-*"}, gh, false, "mcp-github-*"},
		{"mcp server.tool allow", []string{"github.create_issue"}, []string{"mcp-*"}, gh, true, "github.create_issue"},
		{"mcp sanitised server.tool", []string{"github.create-issue"}, nil, gh, true, "github.create-issue"},
		{"group form", []string{"*"}, []string{"git.*"}, gitLog, false, "git.*"},
		{"default deny spares an MCP server named github", []string{"*"}, DefaultDeny, Candidates("mcp-github-create-issue", "github", "github", "create_issue"), true, "allow pattern '*'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Default()
			s.Registry.Nodes = NodeFilter{Allow: tc.allow, Deny: tc.deny}
			got, reason := s.NodeAllowed(tc.cands...)
			if got != tc.want || !strings.Contains(reason, tc.reason) {
				t.Fatalf("NodeAllowed = %v (%s), want %v containing %q", got, reason, tc.want, tc.reason)
			}
		})
	}
}

func TestValidatePattern(t *testing.T) {
	if ValidatePattern("git-[") == nil || ValidatePattern(" ") == nil {
		t.Fatal("bad patterns accepted")
	}
	if err := ValidatePattern("mcp-github-*"); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentUpdatesLoseNothing runs 10 goroutines and 10 processes that
// each add one env key.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	if os.Getenv("PFLOW_SETTINGS_HELPER") != "" {
		return
	}
	p := filepath.Join(t.TempDir(), "settings.json")
	ctx := context.Background()
	fsutiltest.Race(t, 10, "TestHelperUpdate",
		func(i int) []string {
			return []string{"PFLOW_SETTINGS_HELPER=" + p, fmt.Sprintf("PFLOW_SETTINGS_KEY=P%d", i)}
		},
		func(i int) error {
			return Update(ctx, p, func(s *Settings) error { s.Env[fmt.Sprintf("G%d", i)] = "v"; return nil })
		})
	data, _ := os.ReadFile(p)
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("file is not valid JSON: %v", err)
	}
	if len(s.Env) != 20 {
		t.Fatalf("lost writes: %d of 20 keys: %v", len(s.Env), s.Env)
	}
}

func TestHelperUpdate(t *testing.T) {
	p := os.Getenv("PFLOW_SETTINGS_HELPER")
	if p == "" {
		return // a helper: it runs only as a process started by fsutiltest.Race
	}
	if err := Update(context.Background(), p, func(s *Settings) error { s.Env[os.Getenv("PFLOW_SETTINGS_KEY")] = "v"; return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestRetentionDefaultsPartialAndInvalid(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, file string
		want       Retention
		warn       bool
	}{
		{"no file", "", Retention{DefaultRetentionCount, DefaultRetentionDays}, false},
		{"only a count", `{"retention": {"max_count": 5}}`, Retention{5, DefaultRetentionDays}, false},
		{"no limits", `{"retention": {"max_count": 0, "max_age_days": 0}}`, Retention{0, 0}, false},
		{"negative", `{"retention": {"max_count": -1}}`, Retention{DefaultRetentionCount, DefaultRetentionDays}, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
			if c.file != "" {
				os.WriteFile(p, []byte(c.file), 0o600)
			}
			var log bytes.Buffer
			s, err := Load(p, &log)
			if err != nil {
				t.Fatal(err)
			}
			if s.Retention != c.want {
				t.Fatalf("retention %+v, want %+v", s.Retention, c.want)
			}
			if warned := strings.Contains(log.String(), "pflow settings retention"); warned != c.warn {
				t.Fatalf("warning %q, want one: %v", log.String(), c.warn)
			}
		})
	}
}

// "retention" is a key Settings manages: an update that changes it is
// saved (not overwritten by the old file's value, as unknown keys are).
func TestUpdateSavesRetention(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte(`{"retention": {"max_count": 5, "max_age_days": 9}}`), 0o600)
	ctx := context.Background()
	if err := Update(ctx, p, func(s *Settings) error { s.Retention.MaxCount = 7; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Retention != (Retention{MaxCount: 7, MaxAgeDays: 9}) {
		t.Fatalf("retention %+v", s.Retention)
	}
	if s.Retention.MaxAge() != 9*24*time.Hour {
		t.Fatal(s.Retention.MaxAge())
	}
}
