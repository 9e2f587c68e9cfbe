package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/value"
)

// splitChain splits 'a --x=1 >> b --y=2' at each '>>' argument into the
// calls' arguments (an empty call where '>>' starts, ends or is doubled).
func splitChain(args []string) [][]string {
	segs := [][]string{{}}
	for _, a := range args {
		if a == app.ChainSeparator {
			segs = append(segs, []string{})
			continue
		}
		segs[len(segs)-1] = append(segs[len(segs)-1], a)
	}
	return segs
}

// runNodes runs a node call or a '>>' chain (segments: each a node name and
// its params) like a workflow, and saves it with --save once it ran.
func runNodes(cmd *cobra.Command, f *Factory, opts *runOptions, segments [][]string, fail func(error) error) error {
	ctx := cmd.Context()
	if opts.save != "" {
		if err := f.App.CheckSaveName(opts.save); err != nil {
			return fail(err)
		}
	}
	var stdin io.Reader
	if f.IO.StdinPiped && f.IO.In != nil {
		stdin = f.IO.In
	}
	t, params, err := f.App.NodeTarget(ctx, app.NodeRunRequest{Segments: segments, Stdin: stdin})
	if err != nil {
		return fail(err)
	}
	if err := execTarget(cmd, f, opts, t, params, fail); err != nil || opts.save == "" {
		return err
	}
	saved, err := f.App.SaveNodeWorkflow(ctx, t.Workflow, opts.save, false)
	if err != nil {
		return fail(err)
	}
	if opts.format != "json" {
		fmt.Fprintf(f.IO.ErrOut, "%s Saved as '%s' (%s). Run it: pflow %s\n", f.IO.ErrStyle().Success("✓"), saved.Saved.Name, saved.Saved.Path, saved.Saved.Name)
	}
	return nil
}

// writeNodeHelp shows a node's params and outputs for `pflow <node> --help`.
func writeNodeHelp(w io.Writer, s *node.Spec) {
	fmt.Fprintf(w, "Node: %s\n", s.Type)
	if d := strings.TrimSpace(s.Interface.Description); d != "" {
		fmt.Fprintf(w, "Description: %s\n", d)
	}
	fmt.Fprintf(w, "\nUsage:\n  pflow %s --param=value ...\n", s.Type)
	fmt.Fprintln(w, "\nParameters:")
	if len(s.Interface.Params) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	var required []string
	for _, p := range s.Interface.Params {
		req := "optional"
		if p.Required {
			req = "required"
			required = append(required, p.Key)
		}
		typ := p.Type
		if typ == "" {
			typ = "any"
		}
		fmt.Fprintf(w, "  --%s (%s, %s)", p.Key, typ, req)
		if p.Key == s.StdinParam {
			fmt.Fprint(w, " [piped stdin]")
		}
		fmt.Fprintf(w, ": %s\n", cut(firstLine(p.Description), 160))
		if p.Default != nil {
			fmt.Fprintf(w, "      Default: %s\n", value.Stringify(p.Default))
		}
		if len(p.Enum) > 0 {
			var es []string
			for _, e := range p.Enum {
				es = append(es, value.Stringify(e))
			}
			fmt.Fprintf(w, "      One of: %s\n", strings.Join(es, ", "))
		}
	}
	if s.Interface.ExtraParams {
		fmt.Fprintln(w, "  (other --name=value params are passed on as they are)")
	}
	fmt.Fprintln(w, "\nOutputs:")
	if len(s.Interface.Outputs) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, fp := range registry.OutputPaths(s.Interface.Outputs) {
		mark := ""
		if fp.Path == s.MainOutput {
			mark = " [main output: printed, and passed on by '>>']"
		}
		fmt.Fprintf(w, "  %s (%s)%s: %s\n", fp.Path, typeOrAny(fp.Type), mark, cut(firstLine(fp.Description), 160))
	}
	fmt.Fprintln(w, "\nValues are read by each param's type: numbers, true/false, JSON objects and lists;")
	fmt.Fprintln(w, "--name=@file reads the value from a file (@@ for a literal @).")
	if s.StdinParam != "" {
		fmt.Fprintf(w, "Piped stdin fills --%s when it is not given.\n", s.StdinParam)
	} else {
		fmt.Fprintln(w, "This node takes no piped stdin.")
	}
	ex := "pflow " + s.Type
	for _, r := range required {
		ex += " --" + r + "=<value>"
	}
	fmt.Fprintf(w, "\nExample:\n  %s\n", ex)
}

func typeOrAny(t string) string {
	if t == "" {
		return "any"
	}
	return t
}
