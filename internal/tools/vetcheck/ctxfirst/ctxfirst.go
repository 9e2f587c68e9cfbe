// Package ctxfirst defines an analyzer that reports a function whose
// context.Context parameter is not its first, the convention of the
// standard library and of every package pflow calls: a reader finds the
// context in one place, and a call that passes arguments in the wrong order
// fails to compile instead of compiling against a look-alike signature.
//
// Only test handles may come before it (*testing.T, *testing.B, *testing.F,
// testing.TB), as in func waitFor(t *testing.T, ctx context.Context). A
// function type or an interface method is held to the same rule as a
// declared function; a function with two contexts is reported once.
package ctxfirst

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Analyzer is the ctxfirst analyzer.
var Analyzer = &analysis.Analyzer{
	Name:     "ctxfirst",
	Doc:      "report a context.Context parameter that is not the first (test handles such as *testing.T may precede it)",
	URL:      "https://pkg.go.dev/context",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	insp := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	insp.Preorder([]ast.Node{(*ast.FuncType)(nil)}, func(n ast.Node) {
		check(pass, n.(*ast.FuncType))
	})
	return nil, nil
}

// check reports the first context.Context parameter of ft that follows a
// parameter other than a test handle.
func check(pass *analysis.Pass, ft *ast.FuncType) {
	if ft.Params == nil {
		return
	}
	leading := true // only test handles so far
	for _, field := range ft.Params.List {
		t := pass.TypesInfo.TypeOf(field.Type)
		if isContext(t) {
			if !leading {
				pass.ReportRangef(field, "context.Context should be the first parameter")
				return
			}
			continue // a second leading context is odd but not this check's business
		}
		if !isTestHandle(t) {
			leading = false
		}
	}
}

// isContext says whether t is context.Context.
func isContext(t types.Type) bool {
	return isNamed(t, "context", "Context")
}

// isTestHandle says whether t is *testing.T, *testing.B, *testing.F or
// testing.TB.
func isTestHandle(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		return isNamed(p.Elem(), "testing", "T") || isNamed(p.Elem(), "testing", "B") ||
			isNamed(p.Elem(), "testing", "F")
	}
	return isNamed(t, "testing", "TB")
}

// isNamed says whether t is the named type pkg.name (pkg by path).
func isNamed(t types.Type, pkg, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Pkg() != nil && obj.Pkg().Path() == pkg && obj.Name() == name
}
