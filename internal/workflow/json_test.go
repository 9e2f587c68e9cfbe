package workflow

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ParseFileShared parses as ParseFile does and words its errors as it does.
func TestParseFileSharedIsParseFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pflow.md")
	os.WriteFile(good, []byte("# Good\nOne step.\n\n## Steps\n\n### s\nEcho.\n- type: echo\n- message: hi\n"), 0o644)
	bad := filepath.Join(dir, "bad.pflow.md")
	os.WriteFile(bad, []byte("# Bad\nNo steps.\n"), 0o644)
	for _, path := range []string{good, bad, filepath.Join(dir, "missing.pflow.md"), filepath.Join(dir, "x.md")} {
		w1, err1 := ParseFile(path)
		for i := 0; i < 2; i++ {
			w2, err2 := ParseFileShared(path)
			if fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Fatalf("%s: errors differ: %v / %v", path, err1, err2)
			}
			if (w1 == nil) != (w2 == nil) || w1 != nil && (len(w1.Nodes) != len(w2.Nodes) || w1.Source.Path != w2.Source.Path) {
				t.Fatalf("%s: workflows differ", path)
			}
		}
	}
}
