// Command vetcheck is a go vet tool with the analyzers pflow adds to go
// vet's own (see the Makefile's lint target and docs/decisions.md, "A lint
// gate in the test command"):
//
//   - shadow: a variable declared with := or var that has the name and type
//     of one in an outer scope which is used again after it — the inner one
//     was most likely meant to assign the outer (a lost error, a result set
//     in a branch and read as unset after it).
//   - ctxfirst: a context.Context parameter that is not the first.
//
// It is run through the go command, which builds, caches and feeds it the
// packages:
//
//	go build -o bin/vetcheck ./internal/tools/vetcheck
//	go vet -vettool=$PWD/bin/vetcheck ./...
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/pflow-go/pflow/internal/tools/vetcheck/ctxfirst"
	"github.com/pflow-go/pflow/internal/tools/vetcheck/shadow"
)

func main() {
	unitchecker.Main(shadow.Analyzer, ctxfirst.Analyzer)
}
