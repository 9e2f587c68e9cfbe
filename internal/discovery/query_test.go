package discovery

import (
	"strings"
	"testing"
)

// A query is measured in characters, as the message says: 300 two-byte
// characters (600 bytes) are within the 500-character limit (node
// discovery once counted bytes and reported characters).
func TestCheckQueryLenCountsCharacters(t *testing.T) {
	if err := CheckQueryLen(strings.Repeat("é", 300)); err != nil {
		t.Fatalf("300 characters refused: %v", err)
	}
	err := CheckQueryLen(strings.Repeat("é", 501))
	if err == nil || !strings.Contains(err.Error(), "max 500 characters, got 501") {
		t.Fatalf("501 characters: %v", err)
	}
}
