package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
)

// askFunc is an Asker made of a function (the person, in a test).
type askFunc func(q node.Question) (node.Answer, error)

func (f askFunc) Ask(_ context.Context, q node.Question) (node.Answer, error) { return f(q) }

const elicitWorkflow = "# Ask through a server\nA server-everything tool that asks the user mid-call.\n\n## Steps\n\n" +
	"### ask\nThe server asks for some details.\n- type: mcp-everything-trigger-elicitation-request\n\n" +
	"## Outputs\n\n### said\nWhat the tool answered.\n- source: ${ask.result}\n"

// everythingHome registers server-everything in a fresh home.
func everythingHome(t *testing.T) (*app.App, string) {
	t.Helper()
	peers := fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js"}, "node")
	ev := filepath.Join(peers, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	home := t.TempDir()
	a := app.New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}, &fakemcp.Buffer{})
	b, _ := json.Marshal(map[string]any{"everything": map[string]any{"command": "node", "args": []any{ev, "stdio"}, "env": map[string]any{fakemcp.IDVar: fakemcp.NewID()}}})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.SyncMCP(context.Background(), []string{"everything"}, false, nil); err != nil || res[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, res)
	}
	return a, home
}

// A server's question reaches the person through the run's channel: the
// asker a terminal run has, or no one (the call then fails at once,
// naming the question).
func TestServerQuestionThroughTheRunsAsker(t *testing.T) {
	a, _ := everythingHome(t)
	wf := filepath.Join(t.TempDir(), "ask.pflow.md")
	os.WriteFile(wf, []byte(elicitWorkflow), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	var asked []node.Question
	person := askFunc(func(q node.Question) (node.Answer, error) {
		asked = append(asked, q)
		return node.Answer{Choice: "accept", Input: map[string]any{"name": "Ada", "check": true, "firstLine": "x", "integer": int64(5)}, Channel: "terminal"}, nil
	})
	out, err := a.Run(context.Background(), app.RunRequest{Target: target, NoTrace: true, NoRecord: true, Asker: person})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result == nil || !out.Result.Success() || len(asked) != 1 || !strings.Contains(asked[0].From, "server everything") {
		t.Fatalf("answered: %+v %+v asked=%v", out.ValidationErrors, out.Result, asked)
	}
	if said := fmt.Sprint(out.Result.Outputs["said"]); !strings.Contains(said, "Ada") {
		t.Fatalf("the tool did not get the answer: %s", said)
	}

	out, err = a.Run(context.Background(), app.RunRequest{Target: target, NoTrace: true, NoRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result == nil || out.Result.Success() || !strings.Contains(out.Result.Failure.Message, "nobody can answer it") {
		t.Fatalf("without a channel: %+v", out.Result)
	}
}

// Through `pflow mcp serve`, the server's question is passed up to the
// calling client (elicitation), and its answer goes back down.
func TestServerQuestionPassedUpThroughMCPServe(t *testing.T) {
	_, home := everythingHome(t)
	wf := filepath.Join(t.TempDir(), "ask.pflow.md")
	os.WriteFile(wf, []byte(elicitWorkflow), 0o644)
	serve := exec.Command(pflowbin.Path(t), "mcp", "serve")
	serve.Env = []string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			props := map[string]any{}
			if s, ok := req.Params.RequestedSchema.(map[string]any); ok {
				if p, ok := s["properties"].(map[string]any); ok {
					props = p
				}
			}
			content := map[string]any{}
			if _, ok := props["choice"]; ok {
				content["choice"] = "accept"
			}
			if _, ok := props["name"]; ok {
				content["name"] = "Grace"
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: serve}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": wf}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || len(asked) != 1 || !strings.Contains(string(b), "Grace") {
		t.Fatalf("asked %v; result %s", asked, b)
	}
}
