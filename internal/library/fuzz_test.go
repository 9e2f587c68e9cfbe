package library

import (
	"strings"
	"testing"
)

// FuzzFrontmatterRoundTrip: splitting never panics, and rendering metadata
// above any body then splitting gives that body back unchanged.
func FuzzFrontmatterRoundTrip(f *testing.F) {
	f.Add("# Hello\n\n## Steps\n")
	f.Add("---\nname: x\n---\n# T\n")
	f.Add("---\n---\n")
	f.Add("---\r\nfoo: [\r\n---\r\nbody")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		SplitFrontmatter([]byte(body))
		out, err := render(Metadata{Version: "1.0.0", ExecutionCount: 2}, body)
		if err != nil {
			t.Fatal(err)
		}
		meta, got, has, err := SplitFrontmatter(out)
		if err != nil || !has {
			t.Fatalf("rendered frontmatter unreadable: %v", err)
		}
		if meta.ExecutionCount != 2 || strings.TrimPrefix(got, "\n") != body {
			t.Fatalf("round trip: meta %+v body %q want %q", meta, got, body)
		}
	})
}
