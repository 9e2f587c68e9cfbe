package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, ios *IOStreams, args ...string) int {
	t.Helper()
	env := []string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	return Main(context.Background(), args, ios, env)
}

func hello(t *testing.T) string {
	p, err := filepath.Abs("../../examples/hello.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLiveProgressOnlyOnATerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out, errb bytes.Buffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb, ErrTTY: tty}
		if code := runCLI(t, ios, "--no-trace", hello(t), "name=World"); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if out.String() != "HELLO WORLD\n" {
			t.Errorf("stdout must hold only the result, got %q", out.String())
		}
		live := strings.Contains(errb.String(), "greet...") && strings.Contains(errb.String(), "\r\033[K")
		if live != tty {
			t.Errorf("tty=%v: live progress shown=%v\n%q", tty, live, errb.String())
		}
	}
}

func TestJSONModeKeepsStdoutParseable(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"success", []string{"--output-format", "json", "--no-trace", "HELLO", "name=x"}, 0, `"success": true`},
		{"missing input", []string{"--output-format", "json", "HELLO"}, 1, `"missing_inputs"`},
		{"unknown workflow", []string{"--output-format", "json", "no-such-workflow"}, 1, `"type": "not_found"`},
		{"syntax error", []string{"--output-format", "json", "BROKEN"}, 1, `"line": 3`},
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.pflow.md")
	os.WriteFile(broken, []byte("# Broken\nNo steps.\n### Bad ID\n"), 0o644)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{}, c.args...)
			for i, a := range args {
				args[i] = strings.NewReplacer("HELLO", hello(t), "BROKEN", broken).Replace(a)
			}
			code := runCLI(t, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, errb.String())
			}
			var doc map[string]any
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("want %s in\n%s", c.want, out.String())
			}
		})
	}
}

// TestCobraUsageErrorsExitTwo: flag and argument errors cobra reports are
// usage errors (exit 2) with a pointer to --help, not internal errors.
func TestCobraUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"--bogus", "x"}, {"-Z"}, {"--output-format"}, {"workflow", "frob"}} {
		var out, errb bytes.Buffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
		if code := runCLI(t, ios, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errb.String())
		}
		if !strings.Contains(errb.String(), "pflow") || !strings.Contains(errb.String(), "help") {
			t.Errorf("%v: the error must point to help:\n%s", args, errb.String())
		}
	}
}
