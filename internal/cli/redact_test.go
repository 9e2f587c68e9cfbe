package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputStreamsAreMasked: whatever a command prints, on stdout or
// stderr, in text or JSON, goes through the redactor; only an explicit
// --show-values shows settings values.
func TestOutputStreamsAreMasked(t *testing.T) {
	home := t.TempDir()
	env := []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "GITHUB_TOKEN=ghp_cli_stream_secret_1"}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, env)
		return out.String(), errb.String(), code
	}
	if _, errs, code := run("settings", "set-env", "MY_SERVICE_KEY=stored-service-key-2"); code != 0 {
		t.Fatal(errs)
	}
	wf := filepath.Join(home, "leak.pflow.md")
	os.WriteFile(wf, []byte("# Leak\nLeak.\n\n## Inputs\n\n### api_token\nToken.\n- type: string\n\n## Steps\n\n"+
		"### say\nSay.\n- type: shell\n- stdin: ${api_token}\n- command: cat; echo stored-service-key-2 >&2\n\n"+
		"### fail\nFail.\n- type: shell\n- stdin: ${api_token}\n- command: cat >&2; exit 1\n"), 0o644)
	tok := "api_token=input-token-3"
	for _, args := range [][]string{
		{"-v", wf, tok},
		{"--output-format", "json", wf, tok},
		{"-p", "-o", "say.stdout", wf, tok},
		{"registry", "run", "shell", "command=echo ghp_cli_stream_secret_1 stored-service-key-2"},
		{"no-such-workflow-ghp_cli_stream_secret_1"},
	} {
		out, errs, _ := run(args...)
		all := out + errs
		if strings.Contains(all, "ghp_cli_stream_secret_1") || strings.Contains(all, "stored-service-key-2") || strings.Contains(all, "input-token-3") {
			t.Errorf("%v leaks:\nstdout: %s\nstderr: %s", args, out, errs)
		}
		if !strings.Contains(all, "<REDACTED>") {
			t.Errorf("%v: nothing masked, the case proves nothing:\nstdout: %s\nstderr: %s", args, out, errs)
		}
	}
	out, _, _ := run("settings", "list-env")
	if strings.Contains(out, "stored-service-key-2") {
		t.Errorf("list-env: %s", out)
	}
	out, _, _ = run("settings", "list-env", "--show-values")
	if !strings.Contains(out, "MY_SERVICE_KEY: stored-service-key-2") {
		t.Errorf("--show-values must show the value: %s", out)
	}
}

// TestRefusedHomeIsNotRead: a home others may write is refused before its
// settings.json or mcp-servers.json is read, so the values planted there
// (masked everywhere once read) cannot hide the directory or the fix from
// the refusal.
func TestRefusedHomeIsNotRead(t *testing.T) {
	home := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(home, 0o700)
	os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"env": {"A": "PFLOW_HOME", "B": "chmod 700", "C": "writable by", "D": "`+home+`"}}`), 0o600)
	os.WriteFile(filepath.Join(home, "mcp-servers.json"), []byte(`{"mcpServers": {"s": {"command": "true", "env": {"API_KEY": "Make it yours alone"}}}}`), 0o600)
	os.Chmod(home, 0o777)
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"workflow", "list"}, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb},
		[]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")})
	if code == 0 {
		t.Fatalf("a home everyone may write was accepted: %s", out.String())
	}
	for _, w := range []string{"pflow's home " + home + " is writable by its group and every user", "Make it yours alone: chmod 700 " + home, "PFLOW_HOME"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("the refusal lacks %q (masked by the home's own settings?):\n%s", w, errb.String())
		}
	}
}
