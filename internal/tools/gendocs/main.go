// Command gendocs writes pflow's generated references from the code itself,
// so they cannot go stale:
//
//   - docs/nodes.md from the built-in node specs' interface metadata
//     (builtin.Specs): params, outputs with their nested structure and
//     template paths, actions, attempts, and a .pflow.md usage snippet;
//   - docs/cli.md from the cobra command tree (cli.NewRootCmd): every
//     command's usage, description, flags and examples.
//
// Run it from the repository root:
//
//	go run ./internal/tools/gendocs            # rewrite docs/nodes.md and docs/cli.md
//	go run ./internal/tools/gendocs -check     # exit 1 when the committed files differ
//
// gendocs_test.go fails when the committed files differ from the output.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/value"
)

func main() {
	dir := flag.String("dir", "docs", "directory to write nodes.md and cli.md into")
	check := flag.Bool("check", false, "do not write; exit 1 when a file differs from what would be generated")
	flag.Parse()
	os.Exit(run(*dir, *check, os.Stdout, os.Stderr))
}

func run(dir string, check bool, stdout, stderr io.Writer) int {
	files, err := Generate()
	if err != nil {
		fmt.Fprintf(stderr, "gendocs: %v\n", err)
		return 1
	}
	stale := 0
	for _, name := range value.SortedKeys(files) {
		path := filepath.Join(dir, name)
		want := files[name]
		got, err := os.ReadFile(path)
		if err == nil && bytes.Equal(got, want) {
			continue
		}
		if check {
			fmt.Fprintf(stderr, "gendocs: %s is out of date; run `go run ./internal/tools/gendocs` to refresh\n", path)
			stale++
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(stderr, "gendocs: cannot create %s: %v\n", dir, err)
			return 1
		}
		if err := fsutil.WriteFileAtomic(path, want, 0o644); err != nil {
			fmt.Fprintf(stderr, "gendocs: cannot write %s: %v\n", path, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	if stale > 0 {
		return 1
	}
	return 0
}
