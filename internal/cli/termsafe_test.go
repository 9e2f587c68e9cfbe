package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// termSafe escapes every control character but newline and tab, leaves
// pflow's colours and a leading progress redraw, and text without control
// characters untouched.
func TestTermSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain ✓ text\n\tindented":                      "plain ✓ text\n\tindented",
		"\x1b]52;c;cm0gLXJmIH4K\a":                      `\x1b]52;c;cm0gLXJmIH4K\a`,
		"ok\r✓ fake":                                    `ok\r✓ fake`,
		"\x1b[2K\x1b[1A\x1b[8mhidden":                   `\x1b[2K\x1b[1A\x1b[8mhidden`,
		"\x1b[31mred\x1b[0m \x1b[1mbold\x1b[22m":        "\x1b[31mred\x1b[0m \x1b[1mbold\x1b[22m",
		"\r\x1b[K  step ✓ 2ms":                          "\r\x1b[K  step ✓ 2ms",
		"a\r\x1b[Kb":                                    `a\r\x1b[Kb`,
		"c1 \u009b2J \u009d0;t\u009c nul \x00 del \x7f": `c1 \u009b2J \u009d0;t\u009c nul \x00 del \x7f`,
		"bad utf-8 \xff\xfe stays":                      "bad utf-8 \xff\xfe stays",
		"\x1b":                                          `\x1b`,
		"\x1b[":                                         `\x1b[`,
	} {
		if got := termSafe(in, true, true); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
		if got := termSafe(in, true, false); strings.HasPrefix(in, "\r\x1b[K") && got != `\r\x1b[K`+in[4:] {
			t.Errorf("termSafe(%q) off a terminal = %q", in, got)
		}
		// Without colour, no colour passes either.
		if got, want := termSafe(in, false, true), strings.NewReplacer("\x1b[", `\x1b[`).Replace(want); strings.Contains(in, "\x1b[3") && got != want {
			t.Errorf("termSafe(%q) without colour = %q, want %q", in, got, want)
		}
	}
}

// What a command's stderr (data: a web page, a server's message) puts in a
// step's error reaches pflow's stderr escaped; piped stdout stays byte for
// byte.
func TestStderrCarriesNoControlCharacters(t *testing.T) {
	home := t.TempDir()
	wf := filepath.Join(home, "esc.pflow.md")
	os.WriteFile(wf, []byte("# Esc\nEscapes.\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: printf 'out\\r\\033[31m'; printf 'bad \\033]52;c;eA==\\007 \\033[2K\\r✓ fine' >&2; exit 1\n"), 0o644)
	var out, errb bytes.Buffer
	Main(context.Background(), []string{wf}, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")})
	if strings.ContainsAny(errb.String(), "\x1b\r\a") || !strings.Contains(errb.String(), `bad \x1b]52;c;eA==\a \x1b[2K\r✓ fine`) {
		t.Errorf("stderr: %q", errb.String())
	}
	os.WriteFile(wf, []byte("# Esc\nEscapes.\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: printf 'a\\r\\033[31mb'\n\n## Outputs\n\n### o\nIt.\n- source: ${s.stdout}\n"), 0o644)
	out.Reset()
	if code := Main(context.Background(), []string{wf}, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")}); code != 0 || out.String() != "a\r\x1b[31mb\n" {
		t.Errorf("piped stdout: exit %d, %q", code, out.String())
	}
}
