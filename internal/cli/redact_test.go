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
