package runtime

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFailureDetails: a failed shell or http step explains itself with its
// command, exit code, output or response; long text is cut at a character
// boundary so the details stay valid UTF-8.
func TestFailureDetails(t *testing.T) {
	long := "x" + strings.Repeat("é", 1500) // byte 2000 falls inside an é
	tests := []struct {
		name string
		out  map[string]any
		want map[string]any
	}{
		{"shell", map[string]any{"command": "false", "exit_code": int64(1), "stdout": "", "stderr": "boom"},
			map[string]any{"shell_command": "false", "shell_exit_code": int64(1), "shell_stdout": "", "shell_stderr": "boom"}},
		{"shell long stdout", map[string]any{"exit_code": int64(1), "stdout": long},
			map[string]any{"shell_exit_code": int64(1), "shell_stdout": "x" + strings.Repeat("é", 999) + "..."}},
		{"http", map[string]any{"status_code": int64(500), "response": map[string]any{"error": "down"}},
			map[string]any{"status_code": int64(500), "raw_response": map[string]any{"error": "down"}}},
		{"other node", map[string]any{"error": "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := failureDetails(tt.out)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, w := range tt.want {
				if s, ok := w.(string); ok {
					if got[k] != s || !utf8.ValidString(got[k].(string)) {
						t.Errorf("%s = %.40q (%d bytes), want %.40q (%d bytes)", k, got[k], len(got[k].(string)), s, len(s))
					}
				} else if k != "raw_response" && got[k] != w {
					t.Errorf("%s = %v, want %v", k, got[k], w)
				}
			}
		})
	}
}

// TestCoerceErrorQuotesLongValuesWhole: a long wrong value is shortened in
// the message at a character boundary (no broken bytes shown as \x escapes).
func TestCoerceErrorQuotesLongValuesWhole(t *testing.T) {
	_, err := Coerce("xy"+strings.Repeat("é", 40), "int")
	want := `expects an integer, got str "xy` + strings.Repeat("é", 27) + `..."`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
