package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// CompleteFunc sends one prompt to an LLM and returns its text answer.
type CompleteFunc func(ctx context.Context, system, prompt string) (string, error)

// RerankTop is how many of the local ranking's best candidates an LLM rerank sees.
const RerankTop = 10

const rerankSystem = `You rank candidates for a task. Answer with JSON only, no prose:
{"ranking":[{"name":"<candidate name>","confidence":<0..1>,"reason":"<one short sentence>"}]}
List only candidates that could do the task, best first. confidence is how sure you are the candidate does the task as asked.`

// Rerank lets an LLM reorder the top candidates of a local ranking. describe
// returns the text shown to the model for a candidate. Candidates the model
// leaves out keep their local order after the ones it ranked, with their
// confidence halved. On any failure the local ranking is returned unchanged
// with the error.
func Rerank(ctx context.Context, query string, ms []Match, describe func(name string) string, complete CompleteFunc) ([]Match, error) {
	if len(ms) == 0 {
		return ms, nil
	}
	top := ms
	if len(top) > RerankTop {
		top = top[:RerankTop]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n\nCandidates:\n", query)
	for _, m := range top {
		fmt.Fprintf(&b, "\n- name: %s\n  %s\n", m.Name, strings.ReplaceAll(strings.TrimSpace(describe(m.Name)), "\n", "\n  "))
	}
	text, err := complete(ctx, rerankSystem, b.String())
	if err != nil {
		return ms, err
	}
	var ans struct {
		Ranking []struct {
			Name       string  `json:"name"`
			Confidence float64 `json:"confidence"`
			Reason     string  `json:"reason"`
		} `json:"ranking"`
	}
	text = strings.TrimSpace(text)
	if i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}'); i >= 0 && j > i {
		text = text[i : j+1]
	}
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		return ms, fmt.Errorf("the LLM's answer is not the expected JSON (%v); keeping the local ranking", err)
	}
	byName := map[string]Match{}
	for _, m := range top {
		byName[m.Name] = m
	}
	var out []Match
	used := map[string]bool{}
	for _, r := range ans.Ranking {
		m, ok := byName[r.Name]
		if !ok || used[r.Name] {
			continue
		}
		used[r.Name] = true
		m.Confidence = math.Round(math.Min(1, math.Max(0, r.Confidence))*100) / 100
		if r.Reason != "" {
			m.Reasons = append([]string{"LLM: " + strings.TrimSpace(r.Reason)}, m.Reasons...)
		}
		out = append(out, m)
	}
	for _, m := range ms {
		if !used[m.Name] {
			m.Confidence = math.Round(m.Confidence*50) / 100
			out = append(out, m)
		}
	}
	return out, nil
}
