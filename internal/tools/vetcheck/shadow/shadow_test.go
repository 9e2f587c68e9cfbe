package shadow_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/pflow-go/pflow/internal/tools/vetcheck/shadow"
)

func TestShadow(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), shadow.Analyzer, "a")
}
