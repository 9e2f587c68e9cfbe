package mcpclient

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/redact"
)

func TestArgSecrets(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-y", "server", "--api-key=ak-123456"}, "ak-123456"},
		{[]string{"--token", "tk-abcdef", "--verbose"}, "tk-abcdef"},
		{[]string{"-password=pw-xyz987"}, "pw-xyz987"},
		{[]string{"DB_PASSWORD=dbpw-4321"}, "dbpw-4321"},
		{[]string{"--token", "--verbose"}, ""},                // a flag, not a value
		{[]string{"--max-tokens", "4096", "--port=8080"}, ""}, // not secret names
		{[]string{"--client-secret", "cs-99999", "--auth-token=at-8888"}, "cs-99999,at-8888"},
	}
	for _, c := range cases {
		got := strings.Join(ArgSecrets(c.args), ",")
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
}

func TestMaskArgsMasksWhatArgSecretsFinds(t *testing.T) {
	args := []string{"-y", "--api-key=ak-123456", "--token", "tk-abcdef", "--token", "--verbose", "--max-tokens", "4096"}
	got := strings.Join(MaskArgs(args, func(string) string { return "***" }), " ")
	if want := "-y --api-key=*** --token *** --token --verbose --max-tokens 4096"; got != want {
		t.Errorf("MaskArgs = %q, want %q", got, want)
	}
	if args[3] != "tk-abcdef" {
		t.Error("MaskArgs changed its input")
	}
}

// TestServerRedactMasksEveryConfigSecret resolves an entry with a secret in
// every place a config can hold one and checks that Redact (used on the
// server's stderr tail and its error messages) masks each, with the one
// marker every pflow output uses.
func TestServerRedactMasksEveryConfigSecret(t *testing.T) {
	env := map[string]string{"GH_TOKEN": "ghp-from-the-environment-1", "PLAIN_VAR": "plain-var-value-2"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	stdio := map[string]any{
		"command": "server",
		"args":    []any{"--api-key=arg-literal-key-3", "--token", "arg-next-token-4", "postgres://u:url-arg-pass-5@db/x", "--conf=${PLAIN_VAR}"},
		"env":     map[string]any{"GITHUB_TOKEN": "${GH_TOKEN}", "SERVICE_PASSWORD": "literal-env-pass-6", "DEBUG": "verbose-mode"},
	}
	s, err := Resolve("local", stdio, lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"ghp-from-the-environment-1", "plain-var-value-2", "arg-literal-key-3", "arg-next-token-4", "url-arg-pass-5", "literal-env-pass-6"}
	for _, sec := range secrets {
		if got := s.Redact("tail: " + sec + " | " + base64.StdEncoding.EncodeToString([]byte(sec))); got != "tail: "+redact.Redacted+" | "+redact.Redacted {
			t.Errorf("%s: %q", sec, got)
		}
	}
	if got := s.Redact("verbose-mode"); got != "verbose-mode" {
		t.Errorf("a value under a plain name is not a secret: %q", got)
	}

	remote := map[string]any{
		"type":    "http",
		"url":     "https://user:url-pass-7@example.com/mcp?api_key=url-query-key-8",
		"headers": map[string]any{"X-Api-Key": "header-key-9", "Authorization": "Bearer header-bearer-10"},
		"auth":    map[string]any{"type": "basic", "username": "alice", "password": "basic-pass-11"},
	}
	s, err = Resolve("remote", remote, lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("alice:basic-pass-11"))
	for _, sec := range []string{"url-pass-7", "url-query-key-8", "header-key-9", "header-bearer-10", "basic-pass-11", basic} {
		if got := s.Redact("[" + sec + "]"); got != "["+redact.Redacted+"]" {
			t.Errorf("%s: %q", sec, got)
		}
	}
	// The registry-wide collector sees the same secrets without resolving.
	red := redact.NewRedactor()
	AddConfigSecrets(red, "remote", remote, lookup)
	AddConfigSecrets(red, "local", stdio, lookup)
	for _, sec := range append(secrets[:1], "arg-literal-key-3", "url-pass-7", "basic-pass-11", basic) {
		if got := red.String(sec); got != redact.Redacted {
			t.Errorf("AddConfigSecrets missed %s: %q", sec, got)
		}
	}
	// A value a plain variable expanded to is masked in the server's own
	// messages, not everywhere (it may be a path or a mode).
	if red.String("plain-var-value-2") != "plain-var-value-2" {
		t.Error("plain variable value registered process-wide")
	}
}
