package mcpclient

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKnownKeysAreRead: the keys `mcp add` accepts without a note are
// exactly the keys of a server's config that pflow's code reads
// (cfg["key"] in the packages that read configs), so a key added to the
// code is never reported as "not used by pflow", and a key no code reads
// is not accepted silently.
func TestKnownKeysAreRead(t *testing.T) {
	read := map[string]bool{}
	re := regexp.MustCompile(`cfg\["([a-z_0-9]+)"\]`)
	for _, dir := range []string{".", "../app", "../nodes/mcp"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				read[m[1]] = true
			}
		}
	}
	for k := range read {
		if !knownKeys[k] {
			t.Errorf("the code reads server config key %q, but knownKeys (source.go) lacks it: `mcp add` would say it is not used", k)
		}
	}
	for k := range knownKeys {
		if !read[k] {
			t.Errorf("knownKeys lists %q, but no code reads cfg[%q]", k, k)
		}
	}
}
