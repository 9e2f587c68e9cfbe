package sink

import (
	"strings"
	"testing"
)

// FuzzShell: binding any command never panics, and a bound command never
// contains a value's text unless the author wrote it there.
func FuzzShell(f *testing.F) {
	for _, seed := range []string{
		`echo "${a}" '${b}' ${c}`, "cat <<EOF\n${a}\nEOF", "cat <<'EOF'\n${a}\nEOF",
		`echo $(( ${n} + 1 ))`, `echo \${a}`, `echo $'${a}'`, `echo "${a`, "# ${a}",
		`x=${a[${i}]}; echo "$x"`, "`echo ${a}`", `[[ ${a} -eq 1 ]]`, `${a}`,
	} {
		f.Add(seed, "VALUE-\"';$(x)`")
	}
	f.Fuzz(func(t *testing.T, cmd, val string) {
		root := map[string]any{"a": val, "b": val, "c": val, "n": "1", "i": int64(0)}
		b, err := Shell(cmd, root)
		if err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("error is not a *Problem: %T %v", err, err)
			}
			return
		}
		if len(val) >= 8 && strings.Contains(b.Command, val) && !strings.Contains(cmd, val) {
			t.Fatalf("value %q pasted into command %q", val, b.Command)
		}
	})
}
