// Package shadow defines an analyzer that reports the shadowing of a local
// variable where it hides a bug: an inner declaration (:= or var) of a
// variable with the name and type of one in an enclosing scope of the same
// function, when the outer variable is read after the inner one's scope
// ends without having been assigned first. The inner declaration then most
// likely meant to assign the outer variable, and the read sees its old
// value — an error lost in a branch:
//
//	err := a()
//	if retry {
//		x, err := b() // meant: x, err = b()
//		use(x)
//	}
//	return err // a()'s error, never b()'s
//
// A bare return reads every named result, so it counts as a read of them.
//
// Unlike go vet's optional shadow analyzer (golang.org/x/tools, which
// reports any shadowed variable mentioned again later), it stays quiet for
// the idiom `if err := f(); err != nil { ... }` followed by a fresh
// assignment of the outer err, which is not a bug and is everywhere in Go.
// Also exempt: x := x (a deliberate copy), a variable of another type, an
// inner scope (block or case) that ends in a return or a panic, and a
// declaration inside a function literal that does not also contain the outer
// declaration (a closure that must not write its caller's variable, often
// because it runs concurrently).
//
// The order is that of the source, not of control flow: a read of the outer
// variable at the top of a loop that encloses the inner declaration is not
// seen.
package shadow

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Analyzer is the shadow analyzer.
var Analyzer = &analysis.Analyzer{
	Name:     "shadow",
	Doc:      "report an inner variable that shadows an outer one which is read, unassigned, after the inner one's scope",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	insp := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)

	// writes are identifiers that are assigned a new value as a whole
	// (x = v, x, y := v, w; for x = range); a read is any other use.
	writes := map[*ast.Ident]bool{}
	var funcLits []*ast.FuncLit
	var decls []*ast.Ident // candidate inner declarations
	// A bare return reads every named result of its function: it is a use
	// of each, recorded here as the return statement's position.
	bareReturns := map[*types.Var][]token.Pos{}
	insp.WithStack([]ast.Node{(*ast.ReturnStmt)(nil)}, func(n ast.Node, push bool, stack []ast.Node) bool {
		if !push || len(n.(*ast.ReturnStmt).Results) > 0 {
			return true
		}
		for i := len(stack) - 1; i >= 0; i-- {
			var ft *ast.FuncType
			switch f := stack[i].(type) {
			case *ast.FuncDecl:
				ft = f.Type
			case *ast.FuncLit:
				ft = f.Type
			default:
				continue
			}
			if ft.Results != nil {
				for _, field := range ft.Results.List {
					for _, name := range field.Names {
						if v, ok := pass.TypesInfo.Defs[name].(*types.Var); ok {
							bareReturns[v] = append(bareReturns[v], n.Pos())
						}
					}
				}
			}
			break
		}
		return true
	})
	insp.Preorder([]ast.Node{(*ast.AssignStmt)(nil), (*ast.RangeStmt)(nil), (*ast.ValueSpec)(nil), (*ast.FuncLit)(nil)}, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != token.ASSIGN && n.Tok != token.DEFINE {
				return
			}
			for i, lhs := range n.Lhs {
				id, ok := ast.Unparen(lhs).(*ast.Ident)
				if !ok {
					continue
				}
				writes[id] = true
				if n.Tok == token.DEFINE && !isCopyOf(n, i, id) {
					decls = append(decls, id)
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok {
					writes[id] = true
					if n.Tok == token.DEFINE {
						decls = append(decls, id)
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if i < len(n.Values) {
					if v, ok := ast.Unparen(n.Values[i]).(*ast.Ident); ok && v.Name == id.Name {
						continue // var x = x
					}
				}
				decls = append(decls, id)
			}
		case *ast.FuncLit:
			funcLits = append(funcLits, n)
		}
	})

	// uses of each outer variable, in source order.
	uses := map[*types.Var][]*ast.Ident{}
	for id, obj := range pass.TypesInfo.Uses {
		if v, ok := obj.(*types.Var); ok && !v.IsField() {
			uses[v] = append(uses[v], id)
		}
	}

	scopeNodes := map[*types.Scope]ast.Node{}
	for n, sc := range pass.TypesInfo.Scopes {
		scopeNodes[sc] = n
	}

	for _, id := range decls {
		inner, ok := pass.TypesInfo.Defs[id].(*types.Var)
		if !ok || inner == nil || inner.Name() == "_" || inner.Parent() == nil {
			continue
		}
		_, obj := inner.Parent().Parent().LookupParent(inner.Name(), inner.Pos())
		outer, ok := obj.(*types.Var)
		if !ok || outer.Parent() == nil || outer.Parent() == outer.Pkg().Scope() || outer.Parent() == types.Universe {
			continue // not a local variable
		}
		if !types.Identical(inner.Type(), outer.Type()) || closureBetween(funcLits, inner.Pos(), outer.Pos()) {
			continue
		}
		if terminates(scopeNodes[inner.Parent()]) {
			continue // the inner scope returns: nothing after it sees the outer variable from here
		}
		end := inner.Parent().End()
		// The outer variable's first mention after the inner scope: an
		// identifier, or a bare return when it is a named result.
		next, read := token.NoPos, false
		for _, u := range uses[outer] {
			if u.Pos() >= end && (next == token.NoPos || u.Pos() < next) {
				next, read = u.Pos(), !writes[u]
			}
		}
		for _, r := range bareReturns[outer] {
			if r >= end && (next == token.NoPos || r < next) {
				next, read = r, true
			}
		}
		if !read {
			continue
		}
		pass.Reportf(id.Pos(), "declaration of %q shadows the one at line %d, which is read at line %d still holding its old value: was = meant instead of :=?",
			id.Name, pass.Fset.Position(outer.Pos()).Line, pass.Fset.Position(next).Line)
	}
	return nil, nil
}

// isCopyOf says whether the i-th left-hand side of a := is x := x, a
// deliberate copy of the outer variable (common before a closure or in a
// loop).
func isCopyOf(a *ast.AssignStmt, i int, id *ast.Ident) bool {
	if len(a.Lhs) != len(a.Rhs) {
		return false
	}
	r, ok := ast.Unparen(a.Rhs[i]).(*ast.Ident)
	return ok && r.Name == id.Name
}

// terminates says whether the block or clause n (the inner variable's
// scope) ends in a return or a call of panic, so that no statement after it
// runs once the inner variable has been declared.
func terminates(n ast.Node) bool {
	var list []ast.Stmt
	switch n := n.(type) {
	case *ast.BlockStmt:
		list = n.List
	case *ast.CaseClause:
		list = n.Body
	case *ast.CommClause:
		list = n.Body
	}
	if len(list) == 0 {
		return false
	}
	switch last := list[len(list)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.ExprStmt:
		call, ok := last.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := ast.Unparen(call.Fun).(*ast.Ident)
		return ok && id.Name == "panic"
	}
	return false
}

// closureBetween says whether a function literal contains the inner
// declaration but not the outer one.
func closureBetween(lits []*ast.FuncLit, inner, outer token.Pos) bool {
	for _, f := range lits {
		if f.Pos() <= inner && inner < f.End() && !(f.Pos() <= outer && outer < f.End()) {
			return true
		}
	}
	return false
}
