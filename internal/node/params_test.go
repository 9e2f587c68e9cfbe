package node

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// TestParamFailure: a *ParamError (wrapped or not) is a failed result
// marked Permanent, with the error as its message; any other error is not.
func TestParamFailure(t *testing.T) {
	pe := &ParamError{Param: "headers", Message: "expects a mapping"}
	for _, err := range []error{pe, errors.Join(errors.New("context"), pe)} {
		res, ok := ParamFailure(err)
		if !ok || res.Action != "error" || !res.Permanent || res.Outputs["error"] != pe.Error() {
			t.Errorf("ParamFailure(%v) = %+v, %v", err, res, ok)
		}
	}
	if res, ok := ParamFailure(errors.New("connection reset")); ok || res != nil {
		t.Errorf("another error is a param failure: %+v", res)
	}
}

// TestFailParamsOnce: the wrapped node's param errors become permanent
// failures; its other errors and results pass unchanged.
func TestFailParamsOnce(t *testing.T) {
	io := errors.New("disk on fire")
	for _, c := range []struct {
		err       error
		permanent bool
	}{{&ParamError{Param: "p", Message: "bad"}, true}, {io, false}, {nil, false}} {
		n := FailParamsOnce(Func(func(context.Context, *Request) (*Result, error) {
			if c.err != nil {
				return nil, c.err
			}
			return Ok(map[string]any{"x": 1}), nil
		}))
		res, err := n.Run(context.Background(), &Request{})
		switch {
		case c.permanent && (err != nil || res == nil || !res.Permanent):
			t.Errorf("%v: got %+v, %v; want a permanent failure", c.err, res, err)
		case !c.permanent && c.err != nil && err != c.err:
			t.Errorf("%v: got %+v, %v; want the error unchanged", c.err, res, err)
		case c.err == nil && (err != nil || res.Outputs["x"] != 1):
			t.Errorf("success: got %+v, %v", res, err)
		}
	}
}

// TestLiteral: params with a template anywhere in their value are left out.
func TestLiteral(t *testing.T) {
	got := Literal(map[string]any{
		"url": "https://x", "t": "${t}", "h": map[string]any{"A": "${a}"}, "l": []any{"x", "${y}"},
		"n": int64(3), "m": map[string]any{"A": "b"},
	})
	want := map[string]any{"url": "https://x", "n": int64(3), "m": map[string]any{"A": "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Literal = %v, want %v", got, want)
	}
}
