package pflowbin

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Makefile's test target compiles what pflowbin builds before go test
// starts (on an empty build cache those compiles take minutes): the two
// lists must be one.
func TestMakefileCompilesWhatTheTestsBuild(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TEST_BINARIES := (.*)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("the Makefile has no TEST_BINARIES line")
	}
	if got := strings.Fields(string(m[1])); !slices.Equal(got, Packages) {
		t.Errorf("Makefile TEST_BINARIES = %v, pflowbin.Packages = %v", got, Packages)
	}
}

// The fake MCP server is built beside pflow and starts as a command of its
// own.
func TestFakeMCPIsBuilt(t *testing.T) {
	fake, err := FakeMCP()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(fake) != filepath.Dir(Path(t)) {
		t.Errorf("fakemcpd at %s, pflow at %s", fake, Path(t))
	}
	if info, err := os.Stat(fake); err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("fakemcpd is not an executable file: %v", err)
	}
}
