package runtime

import (
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// Items that resolve to text: a JSON array is parsed; lines of text (a shell
// command's stdout) are refused with the way to run once per line; one word
// is refused without that advice.
func TestBatchItemsFromText(t *testing.T) {
	b := &workflow.Batch{Items: "${list.stdout}"}
	root := func(s string) map[string]any { return map[string]any{"list": map[string]any{"stdout": s}} }
	if items, err := batchItems(b, root(`["a", "b"]`)); err != nil || len(items) != 2 {
		t.Fatalf("JSON array text: %v %v", items, err)
	}
	_, err := batchItems(b, root("a.txt\nb.txt\n"))
	if err == nil || !strings.Contains(err.Error(), "items must be an array") || !strings.Contains(err.Error(), "jq -R . | jq -s .") {
		t.Fatalf("lines of text: %v", err)
	}
	_, err = batchItems(b, root("word"))
	if err == nil || strings.Contains(err.Error(), "jq -R") {
		t.Fatalf("one word: %v", err)
	}
}
