package gctune

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
	if !Startup(func(string) string { return "" }) {
		t.Fatal("Startup did nothing without GOGC")
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
	if Startup(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	}) {
		t.Fatal("Startup changed the GC percent although GOGC is set")
	}
	if got := gcPercent(); got != 77 {
		t.Fatalf("GC percent = %d, want 77 untouched", got)
	}
}

// TestLongLivedKeepsItsPace: a long-lived process's GC percent stays
// LongLivedPercent when Startup's restore runs after the first collection,
// unless GOGC is set.
func TestLongLivedKeepsItsPace(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	defer longLived.Store(false)
	debug.SetGCPercent(100)
	if !LongLived(func(string) string { return "" }) || gcPercent() != LongLivedPercent {
		t.Fatalf("GC percent = %d, want %d", gcPercent(), LongLivedPercent)
	}
	restore(100) // what Startup's cleanup does after the first collection
	if got := gcPercent(); got != LongLivedPercent {
		t.Fatalf("GC percent after the start-up restore = %d, want %d", got, LongLivedPercent)
	}
	longLived.Store(false)
	debug.SetGCPercent(77)
	if LongLived(func(k string) string { return map[string]string{"GOGC": "50"}[k] }) || gcPercent() != 77 {
		t.Fatal("LongLived changed the GC percent although GOGC is set")
	}
}
