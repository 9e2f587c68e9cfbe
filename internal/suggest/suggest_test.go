package suggest

import (
	"reflect"
	"testing"
)

func TestNear(t *testing.T) {
	names := []string{"shell", "http", "read-file", "write-file", "gh-pr", "gh-issues", "llm"}
	tests := []struct {
		word    string
		n, minD int
		want    []string
	}{
		{"shel", 3, 1, []string{"shell"}},
		{"gh", 3, 1, []string{"gh-issues", "gh-pr"}}, // short substring matches are kept
		{"writefile", 3, 1, []string{"write-file"}},  // distance 1
		{"reed-file", 3, 1, []string{"read-file"}},   // distance 1; write-file is 2
		{"hxtx", 3, 2, []string{"http"}},             // distance 2 is near only with minDist 2
		{"hxtx", 3, 1, nil},
		{"file", 1, 1, []string{"read-file"}}, // n caps the list, ties alphabetical
		{"xyz", 3, 1, nil},
	}
	for _, tt := range tests {
		if got := Near(tt.word, names, tt.n, tt.minD); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Near(%q, n=%d, min=%d) = %q, want %q", tt.word, tt.n, tt.minD, got, tt.want)
		}
	}
}
