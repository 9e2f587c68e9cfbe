package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
)

const helloMD = "# Hello\nGreets someone by name.\n\n## Inputs\n\n### name\nWho to greet.\n- type: string\n\n## Steps\n\n### greet\nSay hello.\n- type: shell\n- command: echo hello ${name}\n"

const notesMD = "# Release notes\nDraft release notes from git commits.\n\n## Steps\n\n### log\nList commits.\n- type: shell\n- command: git log --oneline\n"

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSaveFileValidatesLikeARun(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	bad := writeFile(t, "bad.pflow.md", strings.Replace(helloMD, "type: shell", "type: shel", 1))
	_, _, err := a.SaveFile(ctx, SaveFileRequest{Path: bad, Name: "bad"})
	if pferr.KindOf(err) != pferr.Validation || !strings.Contains(err.Error(), "shel") {
		t.Fatalf("unknown node type not caught at save: %v", err)
	}
	if a.Library().Exists("bad") {
		t.Fatal("invalid workflow saved")
	}
	good := writeFile(t, "hello.pflow.md", helloMD)
	out, over, err := a.SaveFile(ctx, SaveFileRequest{Path: good, Name: "hello"})
	if err != nil || over || out.Saved.Name != "hello" {
		t.Fatalf("save: %v %v %+v", err, over, out)
	}
	if _, _, err := a.SaveFile(ctx, SaveFileRequest{Path: good, Name: "hello"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second save: %v", err)
	}
	if _, over, err := a.SaveFile(ctx, SaveFileRequest{Path: good, Name: "hello", Force: true}); err != nil || !over {
		t.Fatalf("force: %v %v", over, err)
	}
}

func TestRankSavedWorkflowsAndQueryLimits(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	a.SaveFile(ctx, SaveFileRequest{Path: writeFile(t, "h.pflow.md", helloMD), Name: "hello"})
	a.SaveFile(ctx, SaveFileRequest{Path: writeFile(t, "n.pflow.md", notesMD), Name: "release-notes"})
	ms, total, err := a.RankSavedWorkflows("draft release notes", 5)
	if err != nil || total != 2 || len(ms) == 0 || ms[0].Name != "release-notes" {
		t.Fatalf("rank: %v %d %v", ms, total, err)
	}
	if _, _, err := a.RankSavedWorkflows(strings.Repeat("x", 501), 5); err == nil || !strings.Contains(err.Error(), "Query too long (max 500 characters, got 501)") {
		t.Fatalf("long query: %v", err)
	}
	if _, _, err := a.RankSavedWorkflows("  ", 5); err == nil {
		t.Fatal("empty query accepted")
	}
}

// TestRerankWorkflowsWithLLM wires --llm to a local OpenAI-compatible server
// that reverses the local order.
func TestRerankWorkflowsWithLLM(t *testing.T) {
	var sawPrompt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sawPrompt = string(body)
		answer := `{"ranking":[{"name":"hello","confidence":0.9,"reason":"greets"},{"name":"release-notes","confidence":0.2,"reason":"unrelated"}]}`
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	defer srv.Close()
	home := t.TempDir()
	a := New([]string{"PFLOW_HOME=" + home, "OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=test-key"}, io.Discard)
	ctx := context.Background()
	settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error { s.LLM.DiscoveryModel = "openai-compatible/test-model"; return nil })
	a.SaveFile(ctx, SaveFileRequest{Path: writeFile(t, "h.pflow.md", helloMD), Name: "hello"})
	a.SaveFile(ctx, SaveFileRequest{Path: writeFile(t, "n.pflow.md", notesMD), Name: "release-notes"})
	ms, _, err := a.RankSavedWorkflows("draft release notes from git", 5)
	if err != nil || len(ms) == 0 || ms[0].Name != "release-notes" {
		t.Fatalf("local: %v %v", ms, err)
	}
	// Make sure both are candidates.
	if len(ms) < 2 {
		ms2, _, _ := a.RankSavedWorkflows("greet release notes name", 5)
		ms = ms2
	}
	out := a.RerankWorkflows(ctx, "draft release notes from git", ms)
	if out[0].Name != "hello" || out[0].Confidence != 0.9 || !strings.HasPrefix(out[0].Reasons[0], "LLM: greets") {
		t.Fatalf("rerank = %+v", out)
	}
	if !strings.Contains(sawPrompt, "test-model") || !strings.Contains(sawPrompt, "release-notes") {
		t.Fatalf("request = %s", sawPrompt)
	}
}
