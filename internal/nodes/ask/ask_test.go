package ask

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

type fakeAsker func(ctx context.Context, q node.Question) (node.Answer, error)

func (f fakeAsker) Ask(ctx context.Context, q node.Question) (node.Answer, error) { return f(ctx, q) }

func runWith(t *testing.T, a node.Asker, params map[string]any) (*node.Result, error) {
	t.Helper()
	ctx := context.Background()
	if a != nil {
		ctx = node.WithAsker(ctx, a)
	}
	return Spec().Node.Run(ctx, &node.Request{NodeID: "gate", Type: Type, Params: params})
}

func TestAskRoutesOnTheAnswer(t *testing.T) {
	for _, tc := range []struct{ choice, action string }{{"approve", "approved"}, {"deny", "denied"}} {
		res, err := runWith(t, fakeAsker(func(_ context.Context, q node.Question) (node.Answer, error) {
			if q.ID != "gate" || q.Message != "Go?" || !slices.Equal(q.Choices, DefaultChoices) {
				t.Errorf("question %+v", q)
			}
			return node.Answer{Choice: tc.choice, Channel: ChannelTerminal}, nil
		}), map[string]any{"message": "Go?"})
		if err != nil || res.Action != tc.action || res.Outputs["choice"] != tc.choice || res.Outputs["channel"] != ChannelTerminal {
			t.Fatalf("%s: %v %+v", tc.choice, err, res)
		}
	}
	// Other choices route on their own names; typed input is read by the schema.
	res, err := runWith(t, fakeAsker(func(context.Context, node.Question) (node.Answer, error) {
		return node.Answer{Choice: "draft-2", Input: map[string]any{"n": "3"}, Channel: ChannelRunsAnswer}, nil
	}), map[string]any{"message": "Pick", "choices": []any{"draft-1", "draft-2"},
		"schema": map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}})
	if err != nil || res.Action != "draft-2" || res.Outputs["input"].(map[string]any)["n"] != int64(3) {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestAskWaitsWithoutAPerson(t *testing.T) {
	var we *node.WaitingError
	if _, err := runWith(t, nil, map[string]any{"message": "Go?"}); !errors.As(err, &we) || we.Question.ID != "gate" {
		t.Fatalf("no asker: %v", err)
	}
	_, err := runWith(t, fakeAsker(func(context.Context, node.Question) (node.Answer, error) {
		return node.Answer{}, node.ErrNoAsker
	}), map[string]any{"message": "Go?"})
	if !errors.As(err, &we) {
		t.Fatalf("ErrNoAsker: %v", err)
	}
}

func TestAskTimeout(t *testing.T) {
	never := fakeAsker(func(ctx context.Context, q node.Question) (node.Answer, error) {
		<-ctx.Done()
		return node.Answer{}, ctx.Err()
	})
	res, err := runWith(t, never, map[string]any{"message": "Go?", "timeout": "50ms"})
	if err != nil || res.Action != ActionTimeout || res.Outputs["channel"] != ChannelTimeout {
		t.Fatalf("no default: %v %+v", err, res)
	}
	res, err = runWith(t, never, map[string]any{"message": "Go?", "timeout": 0.05, "default": "deny"})
	if err != nil || res.Action != ActionDenied || res.Outputs["choice"] != "deny" {
		t.Fatalf("default deny: %v %+v", err, res)
	}
}

func TestAskChecks(t *testing.T) {
	for _, params := range []map[string]any{
		{"message": "x", "choices": []any{}},
		{"message": "x", "choices": []any{"Approve"}},
		{"message": "x", "choices": []any{"timeout"}},
		{"message": "x", "choices": []any{"approve", "approved"}},
		{"message": "x", "default": "maybe"},
		{"message": "x", "timeout": "soon"},
		{"message": "x", "schema": map[string]any{"properties": map[string]any{"a": map[string]any{"type": "object"}}}},
		{"message": "x", "cache": true},
	} {
		if p := check(context.Background(), params); len(p) == 0 {
			t.Errorf("no problem found in %v", params)
		}
	}
	if p := check(context.Background(), map[string]any{"message": "x", "choices": "ship, hold", "default": "hold", "timeout": "10m"}); len(p) != 0 {
		t.Errorf("problems in a good step: %+v", p)
	}
	if got := StepActions(map[string]any{"choices": []any{"approve", "later"}}); !slices.Equal(got, []string{"approved", "later", "timeout"}) {
		t.Errorf("actions %v", got)
	}
}
