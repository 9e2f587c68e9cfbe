package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/workflow"
)

func TestRedactorUsesSecretEnvButNotTheWorkingDirectory(t *testing.T) {
	a := New([]string{"PWD=/home/me/project", "OLDPWD=/home/me", "GITHUB_TOKEN=ghp_abcdef123", "PATH=/usr/bin", "PFLOW_HOME=" + t.TempDir()}, nil)
	r := a.Redactor(nil)
	got := r.String("cd /home/me/project && curl -H 'token ghp_abcdef123'")
	if got != "cd /home/me/project && curl -H 'token <REDACTED>'" {
		t.Fatalf("%q", got)
	}
}

// TestRedactorKnowsMCPServerCredentials: the credentials in mcp-servers.json
// are masked in every output, not only in the MCP client's own messages.
func TestRedactorKnowsMCPServerCredentials(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "mcp-servers.json"), []byte(`{"mcpServers": {
		"db": {"command": "srv", "args": ["postgres://app:pg-pass-123@db/x", "--token", "arg-tok-456"], "env": {"API_KEY": "${SVC}"}},
		"web": {"type": "http", "url": "https://h.example/mcp?api_key=q-key-789", "auth": {"type": "bearer", "token": "bearer-tok-000"}}}}`), 0o600)
	a := New([]string{"PFLOW_HOME=" + home, "SVC=svc-from-env-111"}, nil)
	r := a.Redactor(nil)
	for _, s := range []string{"pg-pass-123", "arg-tok-456", "svc-from-env-111", "q-key-789", "bearer-tok-000"} {
		if got := r.String("<" + s + ">"); got != "<<REDACTED>>" {
			t.Errorf("%s: %q", s, got)
		}
	}
}

// The secrets of settings.json and mcp-servers.json are found once while
// the files are unchanged (a long-lived process asks for every request),
// and a changed file's new secrets are masked at once.
func TestBaseSecretsFollowTheFiles(t *testing.T) {
	home := t.TempDir()
	servers := filepath.Join(home, "mcp-servers.json")
	write := func(tok string) {
		os.WriteFile(servers, []byte(`{"mcpServers": {"web": {"type": "http", "url": "https://h.example/mcp", "auth": {"type": "bearer", "token": "`+tok+`"}}}}`), 0o600)
	}
	write("first-token-1")
	os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"env": {"SERVICE_KEY": "settings-key-2"}}`), 0o600)
	time.Sleep(1100 * time.Millisecond) // remembered once a second old (fsutil.Memo)
	a := New([]string{"PFLOW_HOME=" + home}, nil)
	masks := func(want ...string) *redact.Redactor {
		t.Helper()
		st, err := a.Settings()
		if err != nil {
			t.Fatal(err)
		}
		r := a.Scoped().Redactor(st)
		for _, s := range want {
			if got := r.String("<" + s + ">"); got != "<<REDACTED>>" {
				t.Errorf("%s: %q", s, got)
			}
		}
		return a.memo.secrets.r
	}
	first := masks("first-token-1", "settings-key-2")
	if masks("first-token-1") != first {
		t.Fatal("the unchanged files' secrets were found again")
	}
	write("second-token-3")
	if masks("second-token-3", "settings-key-2") == first {
		t.Fatal("the changed file's secrets are the old ones")
	}
}

// TestRunMasksSecretInputsAndComposedParams runs a workflow whose step gets
// a secret param composed from two plain inputs and prints it; the run's
// outputs, the log and the app's writers mask it (and its base64 form).
func TestRunMasksSecretInputsAndComposedParams(t *testing.T) {
	home := t.TempDir()
	var log bytes.Buffer
	a := New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")}, nil)
	a.Log = a.Secrets.Writer(&log)
	md := "# Leak\nLeak.\n\n## Inputs\n\n### head\nFirst half.\n- type: string\n\n### tail\nSecond half.\n- type: string\n\n### db_password\nPassword.\n- type: string\n\n" +
		"## Steps\n\n### show\nShow.\n- type: shell\n- env: {API_TOKEN: \"${head}${tail}\", DBP: \"${db_password}\"}\n- command: printf '%s %s ' \"$API_TOKEN\" \"$DBP\" && printf '%s' \"$API_TOKEN\" | base64\n"
	path := filepath.Join(home, "leak.pflow.md")
	os.WriteFile(path, []byte(md), 0o644)
	w, err := workflow.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), RunRequest{Target: &Target{Workflow: w, Name: path, Path: path},
		Params: map[string]any{"head": "composed-", "tail": "secret-42", "db_password": "input-pass-99"}})
	if err != nil || out.Failed() {
		t.Fatalf("%v %+v %+v %+v", err, out.InputErrors, out.ValidationErrors, out.Result)
	}
	stdout, _ := out.Result.Shared["show"].(map[string]any)["stdout"].(string)
	if !strings.Contains(stdout, "composed-secret-42") {
		t.Fatalf("the step did not print the secret (the test proves nothing): %q", stdout)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("composed-secret-42"))
	for _, text := range []string{out.Redactor.String(stdout), a.Secrets.String(stdout + " input-pass-99")} {
		if strings.Contains(text, "composed-secret-42") || strings.Contains(text, b64) || strings.Contains(text, "input-pass-99") {
			t.Errorf("not masked: %q", text)
		}
	}
	trace, _ := os.ReadFile(out.TracePath)
	if strings.Contains(string(trace), "composed-secret-42") || strings.Contains(string(trace), b64) {
		t.Errorf("trace leaks: %s", trace)
	}
}

func TestScopedForgetsTheRequestsSecrets(t *testing.T) {
	var log bytes.Buffer
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "GITHUB_TOKEN=ghp_base_token_1"}, nil)
	a.Log = a.Secrets.Writer(&log)
	a.LoadSecrets()
	s := a.Scoped()
	s.Secrets.AddSecret("", "request-secret-2")
	s.Log.Write([]byte("ghp_base_token_1 request-secret-2\n"))
	if log.String() != "<REDACTED> <REDACTED>\n" {
		t.Fatalf("%q", log.String())
	}
	if a.Secrets.String("request-secret-2") != "request-secret-2" {
		t.Fatal("a request's secret stayed in the process-wide redactor")
	}
}
