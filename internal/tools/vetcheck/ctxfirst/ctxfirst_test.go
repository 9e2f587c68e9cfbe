package ctxfirst_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/pflow-go/pflow/internal/tools/vetcheck/ctxfirst"
)

func TestCtxFirst(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), ctxfirst.Analyzer, "a")
}
