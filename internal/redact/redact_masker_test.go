package redact

import (
	"bytes"
	"testing"
)

// A Masker masks what its Redactor knew when it was made, in strings and
// bytes; bytes without a secret are returned as they are (no copy).
func TestMasker(t *testing.T) {
	r := NewRedactor()
	if m := r.Masker(); m.String("abc s3cr3t-value") != "abc s3cr3t-value" {
		t.Fatal("an empty redactor's Masker changed a string")
	}
	r.AddSecret("API_TOKEN", "s3cr3t-value")
	m := r.Masker()
	if got := m.String("abc s3cr3t-value"); got != r.String("abc s3cr3t-value") || got == "abc s3cr3t-value" {
		t.Fatalf("String: %q", got)
	}
	clean := []byte("nothing to hide here")
	if got := m.Bytes(clean); &got[0] != &clean[0] {
		t.Fatal("Bytes copied bytes that hold no secret")
	}
	if got := m.Bytes([]byte("x s3cr3t-value y")); bytes.Contains(got, []byte("s3cr3t-value")) {
		t.Fatalf("Bytes: %q", got)
	}
	r.AddSecret("OTHER_TOKEN", "another-secret")
	if m.String("another-secret") != "another-secret" || r.Masker().String("another-secret") == "another-secret" {
		t.Fatal("a Masker must keep the secrets known when it was made; a new one has the new ones")
	}
}
