//go:build linux

package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/nodes/shell"
)

// TestShellLargeTemplateValue: a template value over Linux's limit on one
// environment string (128 KiB) reaches the command byte for byte — quotes,
// $(...), backquotes and trailing newlines included — and is never run as
// shell; several of them together exceed the whole environment's limit and
// still arrive. No file holding a value is left behind.
func TestShellLargeTemplateValue(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cat := testCatalog(nil)
	cat["shell"] = shell.Spec()
	marker := filepath.Join(tmp, "pwned")
	unit := "a'b\"c $(touch " + marker + ") `touch " + marker + "` ${HOME} \\ ;|&\n"
	big := strings.Repeat(unit, 200<<10/len(unit)+1) + "\n\n"
	if len(big) < 200<<10 {
		t.Fatal("the value is too small")
	}
	w := chain(step("s", "shell", map[string]any{"command": `printf '%s' "${big}"`, "strip_newline": false}))
	res := Run(context.Background(), w, map[string]any{"big": big}, Options{Catalog: cat})
	if !res.Success() {
		t.Fatalf("failure: %+v", res.Failure)
	}
	out := res.Shared["s"].(map[string]any)
	if got := out["stdout"].(string); got != big {
		t.Fatalf("stdout is %d bytes, want the %d-byte value exactly", len(got), len(big))
	}
	if out["command"] != `printf '%s' "${_pflow_1}"` {
		t.Errorf("command output = %q, want the command as written (with its variable)", out["command"])
	}

	// Three values of 200 KiB, one small, in one command: 600 KiB would not
	// fit in the environment at once.
	w = chain(step("s", "shell", map[string]any{"command": `printf '%s' "${a}" "${b}" "${c}" "${small}" | wc -c`}))
	res = Run(context.Background(), w, map[string]any{"a": big, "b": big + "b", "c": big + "cc", "small": "xyz"}, Options{Catalog: cat})
	if !res.Success() {
		t.Fatalf("failure: %+v", res.Failure)
	}
	if got, want := strings.TrimSpace(res.Shared["s"].(map[string]any)["stdout"].(string)), len(big)*3+3+3; got != strconv.Itoa(want) {
		t.Errorf("wc -c = %s, want %d", got, want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a value was run as shell")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "pflow-values-*")); len(left) > 0 {
		t.Errorf("value files left behind: %v", left)
	}
}
