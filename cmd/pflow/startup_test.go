package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// initAllocBudget is the most allocations one of pflow's own packages may
// make while initialising. Every pflow process, even 'pflow --version', pays
// for every package's initialisation before main runs; anything bigger than
// a few small values (a compiled regexp is 20-40 allocations, a vocabulary
// table hundreds) belongs behind a sync.OnceValue, built on first use.
const initAllocBudget = 30

// initUnchecked are not checked here: other work owns their start-up.
var initUnchecked = []string{"/internal/mcpclient", "/internal/mcpserver", "/internal/nodes/mcp", "/internal/runtime", "/internal/registry"}

// TestPackageInitStaysSmall runs the real binary with GODEBUG=inittrace=1
// and fails when one of pflow's packages does real work at initialisation.
func TestPackageInitStaysSmall(t *testing.T) {
	bin := buildPflow(t)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "PFLOW_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pflow --version: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (github\.com/pflow-go/pflow/\S+) @.*, (\d+) allocs$`)
	seen := 0
outer:
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		seen++
		for _, skip := range initUnchecked {
			if strings.Contains(m[1], skip) {
				continue outer
			}
		}
		if n, _ := strconv.Atoi(m[2]); n > initAllocBudget {
			t.Errorf("package %s makes %d allocations at start-up (budget %d): build its package-level tables and regexps on first use (sync.OnceValue)", m[1], n, initAllocBudget)
		}
	}
	if seen == 0 {
		t.Fatalf("no inittrace lines for pflow's packages in:\n%s", out)
	}
}
