package library

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil/fsutiltest"
)

// A History holds runs until Flush (the file is not touched meanwhile),
// then writes them in one update that says what as many RecordRun calls
// say; a workflow deleted before the flush stays deleted, without a
// warning.
func TestHistoryWritesHeldRunsOnce(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	l.Save(ctx, hello(t), "gone", SaveOptions{})
	var log bytes.Buffer
	h := NewHistory(l, time.Hour, &log)
	before, _ := os.ReadFile(l.Path("hello"))
	ino := fsutiltest.Inode(t, l.Path("hello"))
	for i, d := range []time.Duration{1500 * time.Millisecond, 500 * time.Millisecond, time.Second} {
		h.Add("hello", RunStat{At: time.Now(), Duration: d, Params: map[string]any{"name": string(rune('a' + i))}})
	}
	h.Add("gone", RunStat{At: time.Now(), Duration: time.Second})
	if after, _ := os.ReadFile(l.Path("hello")); !bytes.Equal(before, after) || fsutiltest.Inode(t, l.Path("hello")) != ino {
		t.Fatal("the file was written before the flush")
	}
	if err := l.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	h.Flush()
	s, err := l.Load("hello")
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Meta; m.ExecutionCount != 3 || m.AverageExecutionDurationSeconds != 1.0 || m.LastExecutionDurationSeconds != 1.0 || m.LastExecutionParams["name"] != "c" {
		t.Fatalf("meta after the flush = %+v", m)
	}
	if l.Exists("gone") {
		t.Fatal("the flush brought back a deleted workflow")
	}
	if log.Len() != 0 {
		t.Fatalf("warnings: %s", log.String())
	}
	h.Flush() // nothing held: nothing written
	if s2, _ := l.Load("hello"); s2.Meta.ExecutionCount != 3 {
		t.Fatalf("a second flush wrote again: %+v", s2.Meta)
	}
}

// Without a flush by a reader, the held runs are written once the delay
// has passed.
func TestHistoryWritesAfterTheDelay(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	h := NewHistory(l, time.Millisecond, nil)
	h.Add("hello", RunStat{At: time.Now(), Duration: time.Second})
	deadline := time.Now().Add(30 * time.Second) // a guard: the write comes after a millisecond
	for {
		if s, err := l.Load("hello"); err == nil && s.Meta.ExecutionCount == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held run was never written")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
