package stepkeys

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The format reference shows exactly the table the code reads: a key the
// engine takes is documented, and a documented key is taken.
func TestFormatDocShowsTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/workflow-format.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), MarkdownTable()) {
		t.Fatalf("docs/workflow-format.md does not show the step keys as the code defines them; replace its table with:\n%s", MarkdownTable())
	}
}

// The agent guides teach every control a step can carry.
func TestAgentGuidesNameEveryControl(t *testing.T) {
	for _, guide := range []string{"../instructions/agent.md", "../instructions/sandbox.md"} {
		text, err := os.ReadFile(guide)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range Names(Control, MCPControl) {
			if !strings.Contains(string(text), "`"+k+"`") && !strings.Contains(string(text), "- "+k+":") {
				t.Errorf("%s never mentions the step key %q", guide, k)
			}
		}
	}
}

func TestParseCache(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want CacheSetting
	}{
		{true, CacheSetting{Set: true, On: true}},
		{false, CacheSetting{Set: true}},
		{"1h", CacheSetting{Set: true, On: true, TTL: time.Hour}},
		{"7d", CacheSetting{Set: true, On: true, TTL: 7 * 24 * time.Hour}},
		{int64(90), CacheSetting{Set: true, On: true, TTL: 90 * time.Second}},
		{"off", CacheSetting{Set: true}},
	} {
		got, err := ParseCache(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseCache(%v) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []any{"soon", "-1h", int64(0), "1 hour", []any{}} {
		if _, err := ParseCache(bad); err == nil {
			t.Errorf("ParseCache(%v) accepted a value the run cannot use", bad)
		}
	}
}

func TestControlChecksRefuseWhatTheRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		key string
		v   any
		ok  bool
	}{
		{RetryWait, "10 seconds", false},
		{RetryWait, "10s", true},
		{RetryWait, 0.5, true},
		{Retries, int64(3), true},
		{Retries, int64(11), false},
		{Retries, "two", false},
		{Retries, 1.5, false},
		{Timeout, "30 sec", false},
		{Timeout, "1m", true},
	} {
		k, _ := Lookup(tc.key)
		err := k.Check(tc.v)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v: err = %v, want ok=%v", tc.key, tc.v, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: the message does not name the key: %v", tc.key, err)
		}
	}
}

func TestConsumed(t *testing.T) {
	for _, tc := range []struct {
		name          string
		declared, mcp bool
		want          bool
	}{
		{Retries, false, false, true},
		{Cache, false, false, true},
		{Cache, true, true, false}, // a tool's own 'cache' argument
		{Timeout, true, false, false},
		{Timeout, true, true, true},
		{Args, false, true, false},
		{Type, false, false, false},
		{"command", true, false, false},
	} {
		if got := Consumed(tc.name, tc.declared, tc.mcp); got != tc.want {
			t.Errorf("Consumed(%s, declared=%v, mcp=%v) = %v, want %v", tc.name, tc.declared, tc.mcp, got, tc.want)
		}
	}
}
