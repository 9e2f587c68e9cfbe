package repocheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMakeTestRunsTheLintGate keeps the lint gate where the tests run: the
// Makefile's test target (which CI runs, through .ci/run) has lint among its
// prerequisites, lint runs staticcheck and the vetcheck analyzers, and
// staticcheck.conf keeps package comments checked (docs/decisions.md, "A
// lint gate in the test command").
func TestMakeTestRunsTheLintGate(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string][]string{} // target -> prerequisites
	recipes := map[string]string{}   // target -> its recipe lines
	current := ""
	for line := range strings.Lines(string(mk)) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "\t") {
			recipes[current] += line + "\n"
			continue
		}
		current = ""
		name, deps, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(name, " =$#") || strings.HasPrefix(deps, "=") {
			continue
		}
		current = name
		targets[name] = strings.Fields(deps)
	}
	if !slices.Contains(targets["test"], "lint") {
		t.Errorf("make test does not depend on lint (its prerequisites: %q)", targets["test"])
	}
	if r := recipes["lint"]; !strings.Contains(r, "staticcheck") || !strings.Contains(r, "-vettool=") {
		t.Errorf("make lint runs neither staticcheck nor the vetcheck analyzers:\n%s", r)
	}
	conf, err := os.ReadFile(filepath.Join(root, "staticcheck.conf"))
	if err != nil || !strings.Contains(string(conf), `"ST1000"`) {
		t.Errorf("staticcheck.conf does not enable ST1000 (package comments): %v\n%s", err, conf)
	}
}
