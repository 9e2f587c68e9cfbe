package a

import (
	"context"
	"testing"
)

func first(ctx context.Context, n int) {}

func second(n int, ctx context.Context) {} // want `context.Context should be the first parameter`

func grouped(a, b int, ctx, other context.Context) {} // want `context.Context should be the first parameter`

func afterT(t *testing.T, ctx context.Context) {}

func afterTB(tb testing.TB, ctx context.Context) {}

func afterB(b *testing.B, ctx context.Context, n int) {}

func none(n int) {}

type alias = context.Context

func viaAlias(n int, ctx alias) {} // want `context.Context should be the first parameter`

type runner interface {
	Run(name string, ctx context.Context) error // want `context.Context should be the first parameter`
}

type callback func(n int, ctx context.Context) // want `context.Context should be the first parameter`

var lit = func(i int, ctx context.Context) {} // want `context.Context should be the first parameter`

type S struct{}

func (S) Method(ctx context.Context) {}
