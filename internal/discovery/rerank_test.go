package discovery

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRerank(t *testing.T) {
	ms := []Match{{Name: "a", Confidence: 0.8}, {Name: "b", Confidence: 0.6}, {Name: "c", Confidence: 0.4}}
	var prompt string
	complete := func(ctx context.Context, system, p string) (string, error) {
		prompt = p
		return "```json\n" + `{"ranking":[{"name":"c","confidence":0.95,"reason":"does exactly this"},{"name":"zzz","confidence":1},{"name":"a","confidence":1.7}]}` + "\n```", nil
	}
	out, err := Rerank(context.Background(), "the task", ms, func(n string) string { return "desc of " + n }, complete)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0].Name != "c" || out[1].Name != "a" || out[2].Name != "b" {
		t.Fatalf("order = %v", out)
	}
	if out[0].Confidence != 0.95 || out[1].Confidence != 1 || out[2].Confidence != 0.3 {
		t.Fatalf("confidences = %v", out)
	}
	if !strings.HasPrefix(out[0].Reasons[0], "LLM: does exactly this") {
		t.Fatalf("reasons = %v", out[0].Reasons)
	}
	if !strings.Contains(prompt, "Task: the task") || !strings.Contains(prompt, "desc of b") {
		t.Fatalf("prompt = %q", prompt)
	}
	// Failures keep the local ranking.
	bad := func(ctx context.Context, s, p string) (string, error) { return "", errors.New("429") }
	if out, err := Rerank(context.Background(), "q", ms, func(string) string { return "" }, bad); err == nil || out[0].Name != "a" {
		t.Fatalf("failure: %v %v", out, err)
	}
	junk := func(ctx context.Context, s, p string) (string, error) { return "I think a", nil }
	if out, err := Rerank(context.Background(), "q", ms, func(string) string { return "" }, junk); err == nil || out[0].Name != "a" {
		t.Fatalf("junk: %v %v", out, err)
	}
}
