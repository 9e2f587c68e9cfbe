package app

import (
	"testing"

	"github.com/pflow-go/pflow/internal/mcpclient"
)

// mcp list masks every key mcpclient decodes as a secret: the secret keys
// of "auth" and the top-level keys some clients put a credential in (a
// run masks the same values: mcpclient.AddConfigSecrets).
func TestMaskEntryMasksTheDecodedSecrets(t *testing.T) {
	auth := map[string]any{"type": "bearer"}
	cfg := map[string]any{"type": "http", "url": "https://h/mcp", "auth": auth}
	for _, k := range mcpclient.SecretAuthKeys() {
		auth[k] = "secret-auth-" + k
	}
	for _, k := range mcpclient.LooseSecretKeys() {
		cfg[k] = "secret-top-" + k
	}
	out := maskEntry(cfg)
	for _, k := range mcpclient.SecretAuthKeys() {
		if v := out["auth"].(map[string]any)[k]; v != "sec***" {
			t.Errorf("auth.%s shown as %v", k, v)
		}
	}
	for _, k := range mcpclient.LooseSecretKeys() {
		if v := out[k]; v != "sec***" {
			t.Errorf("%s shown as %v", k, v)
		}
	}
	if out["url"] != "https://h/mcp" || out["auth"].(map[string]any)["type"] != "bearer" {
		t.Errorf("a value that is no secret was masked: %v", out)
	}
}

// mcp list masks a secret in a server's args in each form a run masks
// (mcpclient.ArgSecrets): --name=X, NAME=X and the argument after --name.
func TestMaskEntryMasksSecretArgs(t *testing.T) {
	cfg := map[string]any{"command": "server", "args": []any{"--api-key=ak-1234567", "--token", "tk-abcdefg", "DB_PASSWORD=pw-7654321", "--port", "8080", "--token=${TOKEN}", 3}}
	out := maskEntry(cfg)["args"].([]any)
	want := []any{"--api-key=ak-***", "--token", "tk-***", "DB_PASSWORD=pw-***", "--port", "8080", "--token=${TOKEN}", 3}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("args[%d] shown as %v, want %v", i, out[i], want[i])
		}
	}
	if cfg["args"].([]any)[2] != "tk-abcdefg" {
		t.Error("maskEntry changed the config it was given")
	}
}
