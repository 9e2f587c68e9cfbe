package sink

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostile are values that would run commands, split words, expand globs or
// variables, or read as options if they were pasted into a command.
var hostile = []string{
	`x"; touch PWNED; echo "`,
	`x'; touch PWNED; echo '`,
	"$(touch PWNED)",
	"`touch PWNED`",
	"; touch PWNED",
	"&& touch PWNED",
	"a\ntouch PWNED\n",
	"$HOME ${HOME} $0",
	"*",
	"-n",
	`\"; touch PWNED #`,
	"EOF\ntouch PWNED\nEOF",
	"'\"'\"'; touch PWNED; '",
	"}; touch PWNED; ${",
}

// run runs command with its templates bound from root in a fresh directory
// and returns stdout, failing the test if the PWNED marker file appeared.
func run(t *testing.T, command string, root map[string]any) string {
	t.Helper()
	bound, err := Shell(command, root)
	if err != nil {
		t.Fatalf("Shell(%q): %v", command, err)
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", bound.Command)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range bound.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if _, statErr := os.Stat(filepath.Join(dir, "PWNED")); statErr == nil {
		t.Fatalf("command %q with %v ran injected code (rewritten: %q)", command, root, bound.Command)
	}
	if err != nil {
		t.Fatalf("command %q (rewritten %q) failed: %v", command, bound.Command, err)
	}
	for _, v := range bound.Env {
		if strings.Contains(bound.Command, v) && len(v) > 3 {
			t.Fatalf("a value appears in the command text (argv): %q", bound.Command)
		}
	}
	return string(out)
}

func TestShellKeepsValuesAsData(t *testing.T) {
	styles := []struct {
		name    string
		command string
		want    func(v string) string // expected stdout for value v
	}{
		{"double quoted", `printf '%s' "${v}"`, func(v string) string { return v }},
		{"double quoted with text", `printf '%s' "<${v}>"`, func(v string) string { return "<" + v + ">" }},
		{"single quoted", `printf '%s' '${v}'`, func(v string) string { return v }},
		{"single quoted with text", `printf '%s' 'a ${v} b'`, func(v string) string { return "a " + v + " b" }},
		{"two in single quotes", `printf '%s' '${v}|${v}'`, func(v string) string { return v + "|" + v }},
		{"unquoted arg count", `set -f; set -- ${v}; printf '%s' "$#"`, nil},
		{"heredoc", "cat <<EOF\n${v}\nEOF", func(v string) string { return v + "\n" }},
		{"command substitution", `printf '%s' "$(printf '%s' "${v}")"`, func(v string) string { return strings.TrimRight(v, "\n") }},
		{"backquotes", "printf '%s' \"`printf '%s' \"${v}\"`\"", func(v string) string { return strings.TrimRight(v, "\n") }},
		{"assignment", `x=${v}; printf '%s' "$x"`, func(v string) string { return v }},
		{"after --", `printf '%s' -- "${v}"`, func(v string) string { return "--" + v }},
		{"nested sh -c stays data", `sh -c 'printf "%s" "$1"' sh "${v}"`, func(v string) string { return v }},
		{"case word", `case "${v}" in *) printf '%s' "${v}";; esac`, func(v string) string { return v }},
		{"default expansion", `printf '%s' "${UNSET_PFLOW:-${v}}"`, func(v string) string { return v }},
	}
	for _, st := range styles {
		for _, v := range hostile {
			t.Run(st.name+"/"+v, func(t *testing.T) {
				got := run(t, st.command, map[string]any{"v": v})
				if st.want != nil && got != st.want(v) {
					t.Errorf("%s with %q: got %q, want %q", st.command, v, got, st.want(v))
				}
			})
		}
	}
}

func TestShellUnquotedBehavesLikeAVariable(t *testing.T) {
	// An unquoted template splits into words like an unquoted variable, but
	// never into shell syntax.
	got := run(t, `set -f; for w in ${v}; do printf '[%s]' "$w"; done`, map[string]any{"v": "a b;c $(d)"})
	if want := "[a][b;c][$(d)]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestShellTypedValues(t *testing.T) {
	root := map[string]any{
		"n": int64(41), "f": 1.5, "b": true,
		"obj":  map[string]any{"a": []any{int64(1), "x"}},
		"list": []any{"a", "b"},
		"s":    map[string]any{"t": "deep"},
	}
	got := run(t, `printf '%s|' "${n}" "${f}" "${b}" '${obj}' "${list}" "${s.t}" "${obj.a[1]}"`, root)
	want := `41|1.5|true|{"a":[1,"x"]}|["a","b"]|deep|x|`
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := run(t, `echo $(( ${n} + 1 ))`, root); got != "42\n" {
		t.Errorf("arithmetic: got %q", got)
	}
	t.Setenv("PFLOW_SINK_TEST", "from-env")
	for cmd, want := range map[string]string{`printf '%s' "$${PFLOW_SINK_TEST}"`: "from-env", `printf '%s-%s' "$${PFLOW_SINK_TEST}" "${n}"`: "from-env-41"} {
		if got := run(t, cmd, root); got != want {
			t.Errorf("%s: got %q, want %q; $${X} should reach the shell as ${X}", cmd, got, want)
		}
	}
}

func TestShellRefusals(t *testing.T) {
	tests := []struct {
		name, command string
		root          map[string]any
		want          string // part of the message
	}{
		{"quoted heredoc", "cat <<'EOF'\n${v}\nEOF", nil, "quoted heredoc"},
		{"escaped", `echo \${v}`, nil, "literal text"},
		{"ansi-c", `echo $'a ${v}'`, nil, "$'...'"},
		{"syntax error", `echo "${v}`, nil, "not valid shell syntax"},
		{"arith non-integer", `echo $(( ${v} + 1 ))`, map[string]any{"v": "a[$(touch PWNED)]"}, "not an integer"},
		{"bash test arith", `[[ ${v} -eq 1 ]] && echo y`, map[string]any{"v": "a[$(touch PWNED)]"}, "not an integer"},
		{"nul byte", `echo "${v}"`, map[string]any{"v": "a\x00b"}, "NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.root
			if root == nil {
				root = map[string]any{"v": "x"}
				if len(CheckShell(tt.command)) == 0 {
					t.Errorf("CheckShell(%q) found no problem", tt.command)
				}
			}
			_, err := Shell(tt.command, root)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Shell(%q) error = %v, want one containing %q", tt.command, err, tt.want)
			}
			if p, ok := err.(*Problem); !ok || p.Hint == "" || p.Template != "${v}" {
				t.Errorf("problem %#v should name the template and carry a hint", err)
			}
		})
	}
}

func TestShellCommentAndNoTemplates(t *testing.T) {
	if got := run(t, "echo hi # ${v}", map[string]any{"v": "$(touch PWNED)"}); got != "hi\n" {
		t.Errorf("got %q", got)
	}
	b, err := Shell(`echo "${HOME:-x}" $1`, nil)
	if err != nil || b.Command != `echo "${HOME:-x}" $1` || len(b.Env) != 0 {
		t.Errorf("a command without templates must pass unchanged: %+v, %v", b, err)
	}
	b, err = Shell(`printf '%s' '$${x}'`, nil)
	if err != nil || b.Command != `printf '%s' '${x}'` {
		t.Errorf("an escaped $${x} must reach the shell as ${x}: %+v, %v", b, err)
	}
	b, err = Shell(`echo "${missing}"`, map[string]any{})
	if err != nil || len(b.Unresolved) != 1 || b.Unresolved[0] != "${missing}" {
		t.Errorf("unresolved: %+v, %v", b, err)
	}
}
