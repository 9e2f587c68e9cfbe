package runtime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/sink"
)

// bindSinks takes the params whose node field has a sink (a shell command,
// code, a URL, a file path) out of params and renders them through their sink, so that
// no template value is ever pasted into them as text (see docs/decisions.md,
// "Template values are data"). It returns
// the rendered params, the environment variables bound for shell sinks and
// the templates that did not resolve. A step that sets unsafe_splice: true
// keeps the old pasting behaviour. sourceLines (the step's _source_lines)
// locates code in the workflow file for error messages.
func bindSinks(params map[string]any, spec *node.Spec, root map[string]any, sourceLines map[string]int) (rendered map[string]any, env map[string]string, unresolved []string, err error) {
	if splice, _ := params[node.UnsafeSpliceParam].(bool); splice {
		return nil, nil, nil, nil
	}
	for _, fld := range spec.Interface.Params {
		if fld.Sink == "" {
			continue
		}
		if fld.Sink == node.SinkExpr {
			// Conditions are evaluated by the node over the shared store:
			// their templates stay as written.
			if v, ok := params[fld.Key]; ok {
				if rendered == nil {
					rendered = map[string]any{}
				}
				rendered[fld.Key] = v
				delete(params, fld.Key)
			}
			continue
		}
		raw, ok := params[fld.Key].(string)
		if !ok || !strings.Contains(raw, "${") {
			continue
		}
		var out string
		switch fld.Sink {
		case node.SinkShell:
			cmd, serr := sink.Shell(raw, root)
			if serr != nil {
				return nil, nil, nil, sinkError(fld.Key, serr)
			}
			out, unresolved = cmd.Command, append(unresolved, cmd.Unresolved...)
			if len(cmd.Env) > 0 && env == nil {
				env = make(map[string]string, len(cmd.Env))
			}
			for k, v := range cmd.Env {
				env[k] = v
			}
		case node.SinkCode:
			src, problems := sink.Code(raw, sink.CodeContext{Inputs: params["inputs"], TypeOf: sink.ValueTypeOf(root), FirstLine: sourceLines[fld.Key]})
			if len(problems) > 0 {
				msgs := make([]string, len(problems))
				for i, p := range problems {
					msgs[i] = sinkError(fld.Key, p).Error()
				}
				return nil, nil, nil, errors.New(strings.Join(msgs, "\n\n"))
			}
			out = src
		case node.SinkPath:
			if allow, _ := params[sink.AllowParentPathsParam].(bool); allow {
				continue
			}
			p, unres, perr := sink.Path(raw, root)
			if perr != nil {
				return nil, nil, nil, sinkError(fld.Key, perr)
			}
			out, unresolved = p, append(unresolved, unres...)
		case node.SinkURL:
			u, unres, uerr := sink.URL(raw, root)
			if uerr != nil {
				return nil, nil, nil, sinkError(fld.Key, uerr)
			}
			out, unresolved = u, append(unresolved, unres...)
		default:
			continue
		}
		if rendered == nil {
			rendered = map[string]any{}
		}
		rendered[fld.Key] = out
		delete(params, fld.Key)
	}
	return rendered, env, unresolved, nil
}

func sinkError(param string, err error) error {
	if p, ok := err.(*sink.Problem); ok && strings.Contains(p.Hint, "\n") {
		return fmt.Errorf("Parameter '%s': %s.\n%s", param, p.Message, p.Hint)
	}
	if p, ok := err.(*sink.Problem); ok && p.Hint != "" {
		return fmt.Errorf("Parameter '%s': %s. %s", param, p.Message, p.Hint)
	}
	return fmt.Errorf("Parameter '%s': %v", param, err)
}
