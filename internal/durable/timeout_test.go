package durable

import (
	"testing"
	"time"
)

// TestStartToCloseFollowsTheStepTimeout: Temporal gives up on a node
// execution a minute after the step's own timeout (its node stops it
// first and reports), and after a day for a step without one.
func TestStartToCloseFollowsTheStepTimeout(t *testing.T) {
	cases := []struct {
		params map[string]any
		want   time.Duration
	}{
		{map[string]any{"timeout": int64(30)}, 90 * time.Second},
		{map[string]any{"timeout": 0.5}, time.Minute + 500*time.Millisecond},
		{map[string]any{"timeout": "2m"}, 3 * time.Minute},
		{map[string]any{}, 24 * time.Hour},
		{map[string]any{"timeout": "soon"}, 24 * time.Hour},
	}
	for _, c := range cases {
		if got := startToClose(c.params); got != c.want {
			t.Errorf("startToClose(%v) = %v, want %v", c.params, got, c.want)
		}
	}
}
