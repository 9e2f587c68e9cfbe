package redact

import "testing"

// Generation moves only when a new pattern is added, and a string shorter
// than every secret is returned without a scan but still masked when long
// enough.
func TestRedactorGenerationAndShortStrings(t *testing.T) {
	r := NewRedactor()
	g0 := r.Generation()
	r.AddSecret("TOKEN", "s3cr3t-value")
	g1 := r.Generation()
	if g1 == g0 {
		t.Fatal("adding a secret must move the generation")
	}
	r.AddSecret("TOKEN", "s3cr3t-value")
	if r.Generation() != g1 {
		t.Fatal("re-adding a known secret must not move the generation")
	}
	if got := r.String("abc"); got != "abc" {
		t.Fatalf("short string: %q", got)
	}
	if got := r.String("x s3cr3t-value y"); got != "x "+Redacted+" y" {
		t.Fatalf("masked: %q", got)
	}
	f := r.Fork()
	if f.Generation() != g1 || f.String("s3cr3t-value") != Redacted {
		t.Fatal("a fork starts with the parent's secrets and generation")
	}
}
