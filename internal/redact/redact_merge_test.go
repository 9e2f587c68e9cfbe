package redact

import "testing"

// Merge gives r every value and name of o; r masks them afterwards, keeps
// its own, and o gains nothing of r's.
func TestMerge(t *testing.T) {
	o := NewRedactor()
	o.AddSecret("API_KEY", "from-the-settings-1")
	r := NewRedactor()
	r.AddSecret("", "request-secret-2")
	r.Merge(o)
	if got := r.String("a from-the-settings-1 b request-secret-2"); got != "a "+Redacted+" b "+Redacted {
		t.Fatalf("merged redactor: %q", got)
	}
	if names := r.SecretNames(); len(names) != 1 || names[0] != "API_KEY" {
		t.Fatalf("names: %v", names)
	}
	gen := r.Generation()
	r.Merge(o)
	if r.Generation() != gen {
		t.Fatal("merging what r holds already changed it")
	}
	if o.String("request-secret-2") != "request-secret-2" {
		t.Fatal("merge changed the merged redactor")
	}
}
