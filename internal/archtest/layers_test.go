package archtest

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pflow-go/pflow/"

// layers are pflow's packages, lowest first. A package may import packages
// of its own group and of any lower layer, never of a higher layer or of
// another group of its own layer (the groups of a layer are peers that
// know nothing of each other). An entry "x" is the package x; "x/..." is x
// and every package below it. A more specific entry wins: internal/durable
// is in another layer than internal/durable/wire.
//
// docs/architecture.md draws the same picture; change both together.
var layers = []layer{
	{"base", []group{{"building blocks and the IR", []string{
		"internal/value", "internal/pferr", "internal/suggest", "internal/fsutil", "internal/home",
		"internal/redact", "internal/proc", "internal/gctune", "internal/instructions",
		"internal/retention", "internal/stephash", "internal/template", "internal/cond", "internal/sink",
		"internal/netpolicy", "internal/node", "internal/stepkeys", "internal/workflow",
	}}}},
	{"stores", []group{{"stores and catalogs", []string{
		"internal/settings", "internal/registry", "internal/library", "internal/discovery",
		"internal/stepcache",
	}}}},
	{"mcp client", []group{{"mcpclient", []string{"internal/mcpclient"}}}},
	{"nodes and engine", []group{
		{"nodes", []string{"internal/nodes/..."}},
		{"engine", []string{
			"internal/runtime", "internal/validate", "internal/trace", "internal/runs",
			"internal/durable/wire",
		}},
	}},
	{"durable", []group{{"durable", []string{"internal/durable"}}}},
	{"app", []group{{"app", []string{"internal/app"}}}},
	{"mcp server", []group{{"mcpserver", []string{"internal/mcpserver"}}}},
	{"cli", []group{{"cli", []string{"internal/cli"}}}},
	{"programs, tools and test rigs", []group{{"programs", []string{
		"cmd/...", "internal/tools/...", "internal/bench/...", "internal/mutate",
		"internal/testutil/...", "internal/llmtest", "internal/reliability/...", "internal/archtest",
		"internal/app/mcptest", "internal/mcpclient/conformance", "internal/fsutil/fsutiltest",
	}}}},
}

type layer struct {
	name   string
	groups []group
}

type group struct {
	name     string
	packages []string
}

// place is where a package sits: its layer's index and its group.
type place struct {
	layer int
	group string
}

// placeOf returns the place of the package at path (relative to the
// module), from its most specific entry.
func placeOf(path string) (place, bool) {
	best, bestLen, found := place{}, -1, false
	for i, l := range layers {
		for _, g := range l.groups {
			for _, e := range g.packages {
				n := -1
				if base, ok := strings.CutSuffix(e, "/..."); ok {
					if path == base || strings.HasPrefix(path, base+"/") {
						n = len(base)
					}
				} else if path == e {
					n = len(e) + 1 // an exact entry beats a tree of the same name
				}
				if n > bestLen {
					best, bestLen, found = place{i, g.name}, n, true
				}
			}
		}
	}
	return best, found
}

// allowed reports whether a package at from may import one at to.
func allowed(from, to place) bool {
	return to.layer < from.layer || to == from
}

// TestImportsPointDown fails for every import of a package in a higher
// layer or a peer group, and for every package no layer lists.
func TestImportsPointDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		from, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		fp, ok := placeOf(from)
		if !ok {
			t.Errorf("%s is in no layer: add it to layers in internal/archtest/layers_test.go and to docs/architecture.md", from)
			continue
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			to, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			tp, ok := placeOf(to)
			if !ok {
				continue // reported as its own package
			}
			if !allowed(fp, tp) {
				t.Errorf("%s (layer %q, %s) imports %s (layer %q, %s): imports point down only", from, layers[fp.layer].name, fp.group, to, layers[tp.layer].name, tp.group)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d packages; go list said:\n%s", checked, out)
	}
}

// TestLayersCatchAnUpwardImport: the check itself names an upward import
// and an import of a peer group.
func TestLayersCatchAnUpwardImport(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"internal/mcpclient", "internal/runtime", false},
		{"internal/validate", "internal/nodes/nested", false},
		{"internal/runtime", "internal/nodes/http", false},
		{"internal/redact", "internal/settings", false},
		{"internal/netpolicy", "internal/nodes/http", false},
		{"internal/mcpclient", "internal/netpolicy", true},
		{"internal/nodes/http", "internal/netpolicy", true},
		{"internal/mcpserver", "internal/cli", false},
		{"internal/nodes/builtin", "internal/nodes/http", true},
		{"internal/cli", "internal/mcpserver", true},
		{"internal/durable", "internal/durable/wire", true},
		{"internal/durable/wire", "internal/durable", false},
		{"cmd/pflow", "internal/cli", true},
	} {
		f, ok1 := placeOf(c.from)
		to, ok2 := placeOf(c.to)
		if !ok1 || !ok2 {
			t.Fatalf("%s or %s is in no layer", c.from, c.to)
		}
		if got := allowed(f, to); got != c.ok {
			t.Errorf("%s -> %s allowed = %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}

// TestEveryPackageIsListedOnce: an entry names a package in one place only.
func TestEveryPackageIsListedOnce(t *testing.T) {
	var seen []string
	for _, l := range layers {
		for _, g := range l.groups {
			for _, e := range g.packages {
				if slices.Contains(seen, e) {
					t.Errorf("%s is listed twice", e)
				}
				seen = append(seen, e)
			}
		}
	}
}

// TestArchitectureNamesEveryPackage: docs/architecture.md mentions every
// package of the module, by its path, its name, or a `dir/*` it belongs to,
// so the map stays true when a package is added.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	out, err := exec.Command("go", "list", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	word := func(w string) bool {
		return regexp.MustCompile(`(^|[^a-z0-9_/-])` + regexp.QuoteMeta(w) + `($|[^a-z0-9_-])`).MatchString(text)
	}
	for _, pkg := range strings.Fields(string(out)) {
		p, ok := strings.CutPrefix(pkg, module)
		if !ok || p == "" {
			continue
		}
		dir, last := path.Split(p)
		if strings.Contains(text, p) || strings.Contains(text, strings.TrimSuffix(dir, "/")+"/*") || word(last) {
			continue
		}
		t.Errorf("docs/architecture.md does not mention %s: add it (its one job) to the table", p)
	}
}
