// Package app holds pflow's use-cases: run, validate, save, list, describe,
// discover, ... The CLI and the MCP server are two thin faces over it; no
// behaviour lives in either.
package app

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runs"
)

// App is the environment every use-case runs in. It is cheap to build and
// every call reads what it needs from disk, so two concurrent requests never
// see each other's in-memory state; what it derives from a configuration
// file (the catalog, the secrets to mask) is remembered only for as long as
// the file is unchanged, and shared read-only (see memo).
type App struct {
	Paths home.Paths
	// Environ is the process environment as KEY=VALUE pairs.
	Environ []string
	// Log receives warnings and diagnostics meant for a human (stderr in the
	// CLI; io.Discard or a log sink in the MCP server).
	Log io.Writer
	// Now is the clock (tests may pin it).
	Now func() time.Time
	// Secrets collects every secret value this process has met: settings
	// env, secret-looking process variables, MCP server credentials, and the
	// secret inputs and params of every run (see Redactor). The CLI masks
	// its output streams with it and the MCP server every response. It is
	// shared by concurrent requests on purpose: a secret of one run is
	// masked in every output. Nil: each run gets its own redactor.
	Secrets *redact.Redactor
	// MCPPool, set by a long-lived process (pflow mcp serve), keeps MCP
	// sessions open across runs (see docs/decisions.md, "Warm sessions in
	// long-lived processes"); nil in the one-shot CLI, whose
	// runs start and stop their servers (see docs/decisions.md, "One MCP
	// session per server per run").
	MCPPool *mcpclient.Pool
	// Afterwards, set by a long-lived process, does the work after a run
	// (its trace, retention) once the run has answered; nil: before.
	Afterwards *Afterwards
	// RunStandby, set by a long-lived process, holds the next run's record
	// directory, made after the previous run answered (runs.Standby); nil:
	// each run reserves its own when it starts.
	RunStandby *runs.Standby
	// RunHistory, set by a long-lived process, gathers saved workflows' run
	// history and writes it a moment later (library.History); nil: each
	// run writes it before it returns.
	RunHistory *library.History
	// Temporal runs workflows on Temporal (see docs/decisions.md, "Scale-out on
	// Temporal"); set by the
	// pflow-temporal binary, nil in pflow (whose start-up must not pay for
	// the Temporal SDK).
	Temporal wire.Engine

	// memo is what this process derived from files while they were
	// unchanged (shared by Scoped copies; nil: nothing is remembered).
	memo *memo
}

// memo holds what an App derived from configuration files, for as long as
// the values read from them are the same (see baseSecrets).
type memo struct {
	mu      sync.Mutex
	secrets *memoSecrets
	catalog *memoCatalog
}

// memoCatalog is what a catalog is made of (App.catalogSpecs) for one
// settings value, one registry.json value and one pool of MCP sessions.
type memoCatalog struct {
	st     *settings.Settings
	reg    *registry.File
	pool   *mcpclient.Pool
	specs  []*node.Spec
	denied map[string]string // type → why the filter denies it
	hidden bool              // Catalog.IncludeHidden
}

// memoSecrets are the base secrets made for one settings value and one
// mcp-servers.json value.
type memoSecrets struct {
	st  *settings.Settings
	mcp *mcpclient.File
	r   *redact.Redactor
}

// New builds an App from a process environment.
func New(environ []string, log io.Writer) *App {
	a := &App{Environ: environ, Log: log, Now: time.Now, Secrets: redact.NewRedactor(), memo: &memo{}}
	if a.Log == nil {
		a.Log = io.Discard
	}
	a.Paths = home.FromEnv(a.Getenv)
	return a
}

// Scoped returns a copy of a for one request of a long-lived process (the
// MCP server): its Secrets are a fork of a's, so the secrets the request
// meets are masked in all its outputs (its Log included) without piling up
// for the life of the process.
func (a *App) Scoped() *App {
	c := *a
	c.Secrets = a.Secrets.Fork()
	log := a.Log
	if u, ok := log.(interface{ Unwrap() io.Writer }); ok {
		log = u.Unwrap()
	}
	c.Log = c.Secrets.Writer(log)
	return &c
}

// Getenv returns the value of key in the process environment.
func (a *App) Getenv(key string) string {
	v, _ := a.LookupProcessEnv(key)
	return v
}

// LookupProcessEnv looks key up in the process environment (exact match).
func (a *App) LookupProcessEnv(key string) (string, bool) {
	if a.Environ == nil {
		return os.LookupEnv(key)
	}
	for i := len(a.Environ) - 1; i >= 0; i-- {
		kv := a.Environ[i]
		if strings.HasPrefix(kv, key) && len(kv) > len(key) && kv[len(key)] == '=' {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}

// hintLine returns the fix an error carries as an indented line to append to
// a warning ("" when it carries none), e.g. for a write into a read-only
// PFLOW_HOME.
func hintLine(err error) string {
	var u interface{ PFError() *pferr.Error }
	if errors.As(err, &u) {
		if pe := u.PFError(); pe != nil && pe.Advice(pferr.Person) != "" {
			return "\n  " + pe.Advice(pferr.Person)
		}
	}
	var pe *pferr.Error
	if errors.As(err, &pe) && pe.Advice(pferr.Person) != "" {
		return "\n  " + pe.Advice(pferr.Person)
	}
	return ""
}
