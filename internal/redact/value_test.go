package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRedactorRemovesValuesAndSecretKeys(t *testing.T) {
	r := NewRedactor()
	r.AddSecret("TOKEN", "s3cr3t-value")
	r.AddSecret("X", "ab") // too short to redact safely
	got := r.Value(map[string]any{
		"cmd":     "curl -H 'Bearer s3cr3t-value' x",
		"api_key": "whatever",
		"list":    []any{"s3cr3t-value!", "ab"},
		"nested":  map[string]any{"password": "p"},
	}).(map[string]any)
	if got["cmd"] != "curl -H 'Bearer <REDACTED>' x" || got["api_key"] != Redacted ||
		got["list"].([]any)[0] != "<REDACTED>!" || got["list"].([]any)[1] != "ab" ||
		got["nested"].(map[string]any)["password"] != Redacted {
		t.Fatalf("%v", got)
	}
}

// Prefix must give exactly what redacting the whole string and then cutting
// it gives, wherever the secrets (in any of their encoded forms) fall around
// the cut — long secrets (which shrink when redacted), short ones (which
// grow), and overlapping ones.
func TestPrefixMatchesRedactingTheWholeString(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sets := [][]string{
		{"abcd"},
		{"SECRET-0123456789-abcdefghijklmnopqrstuvwxyz-long-value"},
		{"abcd", "abcdefghijklmnop", "xyzw", "é-secret-é"},
	}
	for _, secrets := range sets {
		red := NewRedactor()
		for i, s := range secrets {
			red.AddSecret(fmt.Sprintf("S%d", i), s)
		}
		for i := 0; i < 2000; i++ {
			n := r.IntN(300)
			var b strings.Builder
			for b.Len() < n+r.IntN(3000) {
				if r.IntN(3) == 0 {
					forms := Forms(secrets[r.IntN(len(secrets))]) // raw, URL-encoded, JSON-escaped, base64...
					s := forms[r.IntN(len(forms))]
					b.WriteString(s[:len(s)-r.IntN(2)]) // sometimes a form minus its last byte
				} else {
					b.WriteString("abé"[:1+r.IntN(3)])
				}
			}
			s := b.String()
			full := red.String(s)
			want, wantCut := cutRunes(full, n), len(full) > n
			got, gotCut := red.Prefix(s, n)
			if got != want || gotCut != wantCut {
				t.Fatalf("secrets %q, n=%d, s=%q:\ngot  %q %v\nwant %q %v", secrets, n, s, got, gotCut, want, wantCut)
			}
		}
	}
}
