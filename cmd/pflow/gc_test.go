package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestStartupGCIsRaisedUntilTheFirstCollection: a fresh pflow process starts
// with a higher GC percent (no collection during a short command) and is back
// to the default once the first collection has run.
func TestStartupGCIsRaisedUntilTheFirstCollection(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	debug.SetGCPercent(100)
	if !tuneStartupGC(func(string) string { return "" }) {
		t.Fatal("tuneStartupGC did nothing without GOGC")
	}
	if got := gcPercent(); got != startupGCPercent {
		t.Fatalf("GC percent at start-up = %d, want %d", got, startupGCPercent)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent still %d after collections; want the previous 100 back", gcPercent())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestStartupGCRespectsGOGC: a user's GOGC wins.
func TestStartupGCRespectsGOGC(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	debug.SetGCPercent(77)
	if tuneStartupGC(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	}) {
		t.Fatal("tuneStartupGC changed the GC percent although GOGC is set")
	}
	if got := gcPercent(); got != 77 {
		t.Fatalf("GC percent = %d, want 77 untouched", got)
	}
}
