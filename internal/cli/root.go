// Package cli is pflow's command-line face: cobra commands that turn flags
// into app calls and render results as text or JSON. No behaviour lives here.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/suggest"
)

// Factory carries what every command needs.
type Factory struct {
	IO  *IOStreams
	App *app.App
	// Args is the command line (without the program name).
	Args []string
}

// signalCause is the context cancellation cause when a signal arrives.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "interrupted by " + s.sig.String() }

// SignalCause wraps a received signal as a context cancellation cause.
func SignalCause(sig os.Signal) error { return signalCause{sig} }

// ExitCodeForSignal is 130 for SIGINT, 143 for SIGTERM.
func ExitCodeForSignal(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return 143
	}
	return pferr.ExitInterrupted
}

// Main runs pflow with args and returns the exit code. Everything written to
// stdout and stderr is masked by the app's redactor (app.App.Secrets),
// which knows the environment's secrets from the start and each run's as
// the run meets them.
func Main(ctx context.Context, args []string, ios *IOStreams, environ []string) int {
	a := app.New(environ, nil)
	// Nothing is read from a home another user could change: the root
	// command's hook refuses it, and its settings.json and mcp-servers.json
	// would otherwise choose what is masked, in that refusal too.
	if home.Check(a.Paths) == nil {
		a.LoadSecrets()
	}
	masked := *ios
	masked.Getenv = envLookup(environ)
	// What a person reads carries no control character from data (see
	// termWriter); piped stdout stays byte for byte.
	out := ios.Out
	if ios.OutTTY {
		out = termWriter{out, func() bool { return masked.OutStyle().color }, false}
	}
	masked.Out = a.Secrets.Writer(out)
	masked.ErrOut = a.Secrets.Writer(termWriter{ios.ErrOut, func() bool { return masked.ErrStyle().color }, ios.ErrTTY})
	ios = &masked
	a.Log = ios.ErrOut
	a.Temporal = temporalEngine
	f := &Factory{IO: ios, App: a, Args: args}
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && wantsJSON(cmd) {
		// Whoever asked for JSON gets the failure as JSON too: the one error
		// shape of every command (docs/json-output.md).
		var ee *exitError
		if !errors.As(err, &ee) && !errors.Is(err, syscall.EPIPE) && context.Cause(ctx) == nil {
			err = renderJSONError(ios.Out, usageError(err))
		}
	}
	return exitCode(ctx, ios, err)
}

func exitCode(ctx context.Context, ios *IOStreams, err error) int {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		fmt.Fprintln(ios.ErrOut, "\npflow: interrupted")
		return ExitCodeForSignal(sc.sig)
	}
	if err == nil {
		return pferr.ExitOK
	}
	if errors.Is(err, syscall.EPIPE) {
		return pferr.ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	pe := usageError(err)
	renderError(ios.ErrOut, ios.ErrStyle(), pe)
	return pe.ExitCode()
}

// usageError is err as a user-facing error; cobra's own argument errors
// become usage errors (exit 2).
func usageError(err error) *pferr.Error {
	pe := pferr.As(err)
	if pe.Kind == pferr.Internal && isCobraUsage(err) {
		pe = &pferr.Error{Kind: pferr.Usage, Message: err.Error(), Hint: "Run 'pflow --help' for usage."}
	}
	return pe
}

// wantsJSON reports whether cmd was asked for JSON output (--json, or
// --output-format json on a run).
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	if f := cmd.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
		return true
	}
	f := cmd.Flags().Lookup("output-format")
	return f != nil && f.Value.String() == "json"
}

// unmasked returns the writer under w's secret masking, for output that must
// stay byte-exact (the MCP protocol stream, whose every message is redacted
// before it is encoded) or that the user asked to see unmasked.
func unmasked(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}

// exitError carries an exit code for an error that was already reported.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// silentExit returns an error that makes Main exit with code without printing.
func silentExit(code int) error { return &exitError{code} }

// renderError prints a user-facing error: message, location, hint, suggestions.
func renderError(w io.Writer, st Style, e *pferr.Error) {
	fmt.Fprintf(w, "%s %s\n", st.Failure("Error:"), e.Error())
	for _, s := range e.Suggestions {
		fmt.Fprintf(w, "  %s\n", s)
	}
	if h := e.Advice(pferr.Person); h != "" {
		fmt.Fprintf(w, "\n%s\n", st.Hint(h))
	}
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := newRunCmd(f)
	root.Version = Version
	root.SetVersionTemplate(versionLine() + "\n")
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.PersistentFlags().BoolVar(&f.IO.NoColor, "no-color", false, "no colour in the output; colour is used only on a terminal, never with NO_COLOR set or TERM=dumb, and forced into pipes by CLICOLOR_FORCE=1")
	root.SetFlagErrorFunc(flagError)
	// Every command reads or writes the home: refuse one another user
	// could change before anything is read from it. (Help and --version
	// run no hook.)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return home.Check(f.App.Paths) }
	root.AddCommand(
		newWorkflowCmd(f),
		newRegistryCmd(f),
		newSettingsCmd(f),
		newMCPCmd(f),
	)
	root.AddCommand(newInstructionsCmd(f))
	root.AddCommand(newRunSubCmd(f), newRunsCmd(f), newCacheCmd(f), newWorkerCmd(f))
	root.AddCommand(newServeAliasCmd(f))
	addCompletions(root, f)
	rejectUnknownSubcommands(root)
	return root
}

// rejectUnknownSubcommands makes `pflow workflow frob` a usage error (exit 2)
// instead of cobra's default of printing the group's help and succeeding.
func rejectUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if c.HasParent() && c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			msg := fmt.Sprintf("unknown command '%s' for '%s'", args[0], cmd.CommandPath())
			if near := suggest.Near(args[0], names, 1, 2); len(near) > 0 {
				msg += fmt.Sprintf(" — did you mean '%s %s'?", cmd.CommandPath(), near[0])
			}
			return &pferr.Error{Kind: pferr.Usage, Message: msg,
				Hint: fmt.Sprintf("Available: %s. Run '%s --help' for usage.", strings.Join(names, ", "), cmd.CommandPath())}
		}
	}
}

// flagError words a flag parsing error of cmd as a usage error, with the
// closest flag cmd knows when the flag is unknown (--valdate-only).
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	hint := fmt.Sprintf("Run '%s --help' for usage.", cmd.CommandPath())
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return &pferr.Error{Kind: pferr.Usage, Message: msg, Hint: hint}
	}
	name, _, _ = strings.Cut(name, "=")
	var flags []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f.Name)
		}
	})
	if near := suggest.Near(name, flags, 1, 2); len(near) > 0 {
		msg += fmt.Sprintf(" — did you mean --%s?", near[0])
	}
	return &pferr.Error{Kind: pferr.Usage, Message: msg, Hint: hint}
}

// commandTypo adds "did you mean 'pflow registry'?" to the error of a run
// target that is neither a workflow nor a file but is close to a command
// name (`pflow regstry list`).
func commandTypo(root *cobra.Command, target string, err error) error {
	pe := pferr.As(err)
	if pe.Kind != pferr.NotFound || strings.ContainsAny(target, "/.") {
		return err
	}
	var names []string
	for _, c := range root.Root().Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	// A typo of a command (regstry), not a name that merely contains one
	// (no-such-workflow): an edit distance of at most 2.
	best, bestD := "", 3
	for _, n := range names {
		if d := suggest.Distance(target, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return err
	}
	cp := *pe
	cp.Message += fmt.Sprintf(" — did you mean the command 'pflow %s'?", best)
	return &cp
}

// envLookup reads a KEY=VALUE list (the process environment Main is given).
func envLookup(environ []string) func(string) string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}
