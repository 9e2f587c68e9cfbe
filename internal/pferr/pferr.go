// Package pferr is pflow's typed user-facing error: what went wrong, where,
// how to fix it, and the process exit code. The CLI renders it as text or
// JSON; the MCP server renders it as an error envelope.
package pferr

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of errors, shared by the CLI JSON output and the MCP server envelopes.
const (
	Validation = "validation" // the workflow, a param or a config is invalid
	Execution  = "execution"  // a run failed
	NotFound   = "not_found"  // a named thing does not exist
	Security   = "security"   // a name or path was refused
	Usage      = "usage"      // the command line is wrong
	Config     = "config"     // a config file is broken
	Internal   = "internal"   // a bug or an environment failure
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitWaiting: the run paused at an ask step, waiting for a person's
	// answer (pflow runs answer continues it); nothing failed.
	ExitWaiting     = 3
	ExitInterrupted = 130
)

// Error is a user-facing error.
type Error struct {
	Kind    string
	Message string
	// Where locates the problem: "file.pflow.md:12", "node 'fetch'", "server 'github'".
	Where string
	// Hint says how to fix it, in words every reader understands (no
	// pflow command, no tool call). May be multi-line.
	Hint string
	// Fixes are fixes as data, worded for each reader (Fix.Say).
	Fixes []Fix
	// Details are structured extras for JSON consumers.
	Details map[string]any
	// Suggestions are short alternative actions ("Did you mean ...").
	Suggestions []string
	// Code is the exit code (0 means ExitFailure, or ExitUsage for Usage errors).
	Code int
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Where != "" {
		b.WriteString(e.Where)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns the process exit code for e.
func (e *Error) ExitCode() int {
	if e.Code != 0 {
		return e.Code
	}
	if e.Kind == Usage {
		return ExitUsage
	}
	return ExitFailure
}

// New returns an Error of the given kind.
func New(kind, msg string) *Error { return &Error{Kind: kind, Message: msg} }

// Newf returns an Error of the given kind with a formatted message.
func Newf(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// WithHint sets the fix hint and returns e.
func (e *Error) WithHint(h string) *Error { e.Hint = h; return e }

// WithFix adds a fix.
func (e *Error) WithFix(f Fix) *Error { e.Fixes = append(e.Fixes, f); return e }

// Advice is the hint and the fixes worded for r, one per line ("" when
// there are none).
func (e *Error) Advice(r Reader) string {
	return strings.TrimSpace(e.Hint + "\n" + Say(e.Fixes, r))
}

// WithWhere sets the location and returns e.
func (e *Error) WithWhere(w string) *Error { e.Where = w; return e }

// As returns err as *Error, wrapping unknown errors as Internal.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Kind: Internal, Message: err.Error(), Err: err}
}

// KindOf returns the kind of err ("" when it is not an *Error).
func KindOf(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ""
}

// Wrap returns err as a user-facing error of the given kind whose message is
// context, ": " and err's message (err's alone when context is empty). When
// err or an error it wraps has its own user-facing form (a PFError() *Error
// method, e.g. a write refused by a read-only directory), that form's kind,
// hint and details are kept and only the context is prefixed.
func Wrap(err error, kind, context string) *Error {
	if err == nil {
		return nil
	}
	prefix := func(m string) string {
		if context == "" {
			return m
		}
		return context + ": " + m
	}
	var u interface{ PFError() *Error }
	if errors.As(err, &u) {
		if pe := u.PFError(); pe != nil {
			c := *pe
			c.Message = prefix(c.Message)
			return &c
		}
	}
	return &Error{Kind: kind, Message: prefix(err.Error()), Err: err}
}
