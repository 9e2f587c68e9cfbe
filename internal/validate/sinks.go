package validate

import (
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/sink"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/workflow"
)

// sinkChecks finds templates that cannot reach their param safely (see
// docs/decisions.md, "Template values are data"): a template in code, or where
// a shell command reads literal text; and
// warns about steps that opt out with unsafe_splice.
func (v *validator) sinkChecks() {
	if v.opts.Catalog == nil {
		return
	}
	for _, n := range v.nodes {
		if v.unknown[n.ID] {
			continue
		}
		spec, ok := v.opts.Catalog.Lookup(n.Type)
		if !ok {
			continue
		}
		splice, _ := n.Params[node.UnsafeSpliceParam].(bool)
		for _, fld := range spec.Interface.Params {
			raw, ok := n.Params[fld.Key].(string)
			if ok && fld.Sink == node.SinkShell {
				v.emptyStdin(n, spec, fld.Key, raw)
			}
			if fld.Sink == "" || !ok || !strings.Contains(raw, "${") {
				continue
			}
			if splice {
				what := "as code; a hostile value (a web page, an issue title, an LLM answer) can run any command"
				switch fld.Sink {
				case node.SinkURL:
					what = "as text; a hostile value can add path segments or query parameters, or change the host"
				case node.SinkPath:
					what = "as text; a hostile value can leave the folder with a '..' segment"
				case node.SinkLiteral:
					what = "to choose the workflow that runs; a hostile value (a web page, an issue title, an LLM answer) can make it run another one"
				}
				v.add(layerTypes, Diagnostic{Severity: SeverityWarning,
					Message: fmt.Sprintf("Step '%s' (%s) sets %s: true, so template values are pasted into '%s' %s", n.ID, n.Type, node.UnsafeSpliceParam, fld.Key, what),
					NodeID:  n.ID, Param: node.UnsafeSpliceParam, Line: n.Line,
					Hint: fmt.Sprintf("Remove '- %s: true' unless every value in '%s' is text you wrote yourself.", node.UnsafeSpliceParam, fld.Key)})
				continue
			}
			var problems []*sink.Problem
			switch fld.Sink {
			case node.SinkShell:
				problems = sink.CheckShell(raw)
			case node.SinkLiteral:
				problems = []*sink.Problem{{Offset: strings.Index(raw, "${"),
					Message: "the workflow to run must be written out, not a template: a value from a web page, a file or an LLM answer would choose which code runs",
					Hint:    "Write the path (relative to this workflow's file) or the saved workflow's name itself; pass data to the child with param_mapping."}}
			case node.SinkCode:
				problems = sink.CheckCode(raw, sink.CodeContext{
					Inputs:    n.Params["inputs"],
					TypeOf:    func(r template.Ref) string { return v.refTypes[refTypeKey(n.ID, fld.Key, r.Raw)] },
					FirstLine: n.SourceLines[fld.Key],
				})
			}
			for _, p := range problems {
				line := n.Line
				if start, ok := n.SourceLines[fld.Key]; ok {
					line = start + strings.Count(raw[:p.Offset], "\n")
				}
				v.add(layerTypes, Diagnostic{
					Message: fmt.Sprintf("Step '%s' (%s), param '%s': %s", n.ID, n.Type, fld.Key, p.Message),
					NodeID:  n.ID, Param: fld.Key, Line: line, Hint: p.Hint})
			}
		}
	}
}

// emptyStdin refuses a command that reads its standard input in a step
// that gives it none (its `stdin` param is missing): the command reads an
// empty input, so `tr a-z A-Z` or `jq .x` can only produce nothing. The
// usual cause is a `- stdin:` line written on, or moved to, another step.
func (v *validator) emptyStdin(n *workflow.Node, spec *node.Spec, key, cmd string) {
	if _, ok := n.Params["stdin"]; ok {
		return
	}
	if m := v.w.Mappings[n.ID]; m != nil {
		if _, ok := m.InputMappings["stdin"]; ok {
			return
		}
	}
	if _, ok := spec.Interface.Param("stdin"); !ok {
		return
	}
	reader := sink.StdinReader(cmd)
	if reader == "" {
		return
	}
	hint := fmt.Sprintf("Add '- stdin: ${<step>.stdout}' to step '%s' with the data '%s' should read, or give '%s' a file to read.", n.ID, reader, reader)
	if p := v.previous(n.ID); p != "" {
		hint = fmt.Sprintf("Add '- stdin: ${%s.stdout}' (or the data '%s' should read) to step '%s', or give '%s' a file to read.", p, reader, n.ID, reader)
	}
	v.add(layerTypes, Diagnostic{
		Message: fmt.Sprintf("Step '%s' (%s), param '%s': '%s' reads standard input, but the step has no 'stdin', so it reads nothing", n.ID, n.Type, key, reader),
		NodeID:  n.ID, Param: key, Line: n.Line, Hint: hint})
}

// previous is the step written before id, "" for the first.
func (v *validator) previous(id string) string {
	if i, ok := v.index[id]; ok && i > 0 {
		return v.nodes[i-1].ID
	}
	return ""
}
