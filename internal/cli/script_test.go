package cli

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
	"github.com/pflow-go/pflow/internal/testutil/realpython"
)

func TestMain(m *testing.M) {
	// Code steps start python3 each time: the interpreter, not a shim.
	realpython.Use()
	os.Exit(m.Run())
}

// TestScripts runs the CLI end-to-end scripts in testdata/script. Each
// script gets its own PFLOW_HOME; $REPO points at the repository root (for
// examples/). `pflow` in a script is the real binary, built as `go build`
// builds it (internal/testutil/pflowbin): what a user runs, at its speed. The
// race detector checks the CLI's code where the tests run it in process
// (Main in golden_test.go and the other tests of this package).
func TestScripts(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Dir(pflowbin.Path(t))
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PFLOW_HOME", filepath.Join(env.WorkDir, ".pflow-home"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("REPO", repo)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve-api": serveAPI,
			"fakemcp":   fakeMCPConfig,
		},
	})
}

// serveAPI starts a small JSON API on 127.0.0.1 for the http examples and
// sets $API to its URL. Routes:
//
//	GET /projects/pflow/releases?per_page=N → {"releases":[{"id":42,"version":"v2.1.0"}, ...]}
//	GET /projects/<other>/releases        → 404 {"error":"unknown project <other>"} (one path segment, decoded)
//	GET /releases/42/notes                → {"text":"Faster batches."}
//	anything else                         → 404 {"error":"not found"}
func serveAPI(ts *testscript.TestScript, neg bool, args []string) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /projects/{p}/releases", func(w http.ResponseWriter, r *http.Request) {
		if p := r.PathValue("p"); p != "pflow" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"error": "unknown project " + p})
			return
		}
		if r.Header.Get("Accept") != "application/json" || r.URL.Query().Get("per_page") != "5" {
			http.Error(w, `{"error":"expected Accept: application/json and per_page=5"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"releases": []any{
			map[string]any{"id": 42, "version": "v2.1.0"}, map[string]any{"id": 41, "version": "v2.0.0"}}})
	})
	mux.HandleFunc("GET /releases/42/notes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"text":"Faster batches."}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not found"}`))
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("API", "http://"+l.Addr().String())
}

// fakeMCPConfig writes an mcpServers config file for 'pflow mcp add': one
// server NAME run by fakemcpd, the fake MCP server (tools echo,
// add, ...; see internal/testutil/fakemcp), with the given modes.
//
//	fakemcp NAME FILE [modes...]
func fakeMCPConfig(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fakemcp NAME FILE [modes...]")
	}
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{args[0]: fakemcp.Entry(fakemcp.NewID(), "", args[2:]...)}})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), data, 0o644))
}
