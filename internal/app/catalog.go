package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/builtin"
	mcpnode "github.com/pflow-go/pflow/internal/nodes/mcp"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/value"
)

// Settings loads settings.json (defaults when missing; a corrupt file gives a
// warning on a.Log and the defaults). The Settings may be shared with other
// callers (settings.LoadShared): they must not be modified.
func (a *App) Settings() (*settings.Settings, error) {
	return settings.LoadShared(a.Paths.Settings, a.Log)
}

// EnvLookup returns the lookup nodes use for configuration: the process
// environment first, then settings.json env (case-insensitive): see
// docs/decisions.md, "Undefined ${VAR} expands to empty, with a warning".
func (a *App) EnvLookup(s *settings.Settings) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := a.LookupProcessEnv(k); ok {
			return v, true
		}
		return s.LookupEnv(k)
	}
}

// netPolicy is where the connections of a run (or of a command) may go:
// the settings' network section, under the agent's rules when agent is
// set (a run an agent started through pflow mcp serve). The http node and
// remote MCP servers obey it.
func (a *App) netPolicy(st *settings.Settings, agent bool) *node.NetPolicy {
	p := &node.NetPolicy{Agent: agent}
	if st != nil {
		p.AllowPrivate, p.AllowHosts = st.Network.AllowPrivate, st.Network.AllowHosts
	}
	return p
}

// RegistryStore returns the registry.json store, warning on a.Log.
func (a *App) RegistryStore() *registry.Store {
	s := registry.Open(a.Paths.Registry, a.Log)
	s.CachePath = filepath.Join(a.Paths.Cache, "registry.cache")
	s.OnRestore = a.markMCPSyncStale
	return s
}

// NodeCandidates returns the names allow/deny patterns match for a spec
// (shared by the registry filter and 'pflow settings check').
func NodeCandidates(s *node.Spec) []string {
	return settings.Candidates(s.Type, s.Group, registry.MCPServerOf(s), registry.MCPToolOf(s))
}

// includeTestNodes reports whether hidden test nodes are listed.
func (a *App) includeTestNodes(s *settings.Settings) bool {
	switch strings.ToLower(strings.TrimSpace(a.Getenv("PFLOW_INCLUDE_TEST_NODES"))) {
	case "true", "1", "yes":
		return true
	case "false", "0", "no":
		return false
	}
	return s.Registry.IncludeTestNodes
}

// AllSpecs loads settings, the built-in specs and registry.json's MCP and
// user entries, without applying the allow/deny filter. It writes the core
// entries to registry.json when they are missing or out of date.
//
// The specs may be shared with other callers (a long-lived process makes
// them once while settings.json and registry.json are unchanged): they must
// not be modified.
func (a *App) AllSpecs(ctx context.Context) ([]*node.Spec, *settings.Settings, error) {
	cs, err := a.catalogSpecs(ctx)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(cs.specs), cs.st, nil
}

// catalogSpecs are what Catalog is made of: AllSpecs, the allow/deny
// filter's verdicts and whether hidden nodes are shown. They are made once
// while the settings and registry.json values are unchanged (see memo).
func (a *App) catalogSpecs(ctx context.Context) (*memoCatalog, error) {
	st, err := a.Settings()
	if err != nil {
		return nil, err
	}
	store := a.RegistryStore()
	f, err := store.LoadWithoutSchemas()
	if err != nil {
		return nil, err
	}
	if a.memo != nil {
		a.memo.mu.Lock()
		c := a.memo.catalog
		a.memo.mu.Unlock()
		if c != nil && c.st == st && c.reg == f && c.pool == a.MCPPool {
			return c, nil
		}
	}
	specs, err := a.specsFrom(ctx, store, f, st)
	if err != nil {
		return nil, err
	}
	c := &memoCatalog{st: st, reg: f, pool: a.MCPPool, specs: specs, hidden: a.includeTestNodes(st), denied: map[string]string{}}
	for _, s := range specs {
		if ok, reason := st.NodeAllowed(NodeCandidates(s)...); !ok {
			c.denied[s.Type] = reason
		}
	}
	if a.memo != nil {
		a.memo.mu.Lock()
		a.memo.catalog = c
		a.memo.mu.Unlock()
	}
	return c, nil
}

// specsFrom is AllSpecs of settings st and registry.json's value f.
func (a *App) specsFrom(ctx context.Context, store *registry.Store, f *registry.File, st *settings.Settings) ([]*node.Spec, error) {
	core := builtin.Specs(builtin.Config{LLMDefaultModel: st.LLM.DefaultModel})
	if want, stale := coreEntriesStale(f, core, st.LLM.DefaultModel); stale {
		err := store.Update(ctx, func(f *registry.File) error {
			for k, e := range f.Nodes {
				if e.Type == registry.TypeCore {
					delete(f.Nodes, k)
				}
			}
			for k, e := range want {
				f.Nodes[k] = e
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(a.Log, "Warning: could not record the core nodes in %s: %v%s\n", a.Paths.Registry, err, hintLine(err))
		}
	}
	specs := append([]*node.Spec(nil), core...)
	builtins := make(map[string]bool, len(core))
	for _, s := range core {
		builtins[s.Type] = true
	}
	var mcp node.Node
	for _, k := range value.SortedKeys(f.Nodes) {
		e := f.Nodes[k]
		if e.Type == registry.TypeCore || builtins[k] {
			continue
		}
		var impl node.Node
		isMCP := false
		switch {
		case e.MCP != nil || e.Type == registry.TypeMCP:
			if e.MCP == nil {
				fmt.Fprintf(a.Log, "Warning: registry entry %q is an MCP node without server/tool data; run 'pflow mcp sync' to repair it\n", k)
				continue
			}
			if mcp == nil {
				nodes := f.Nodes
				mcp = mcpnode.New(mcpnode.Config{ServersPath: a.Paths.MCPServers, Env: a.EnvLookup(st), Log: a.Log, Pool: a.MCPPool,
					Sample: sampler(a.EnvLookup(st), st.LLM.DefaultModel),
					SchemaHash: func(nodeType string) string {
						if e := nodes[nodeType]; e != nil && e.MCP != nil {
							return e.MCP.SchemaHash
						}
						return ""
					}})
			}
			impl, isMCP = mcp, true
		default:
			name := k
			impl = node.Func(func(ctx context.Context, req *node.Request) (*node.Result, error) {
				return node.Fail(fmt.Sprintf("node '%s' is a user node from the Python pflow registry, which this pflow cannot run; remove it from %s", name, a.Paths.Registry), nil), nil
			})
		}
		spec := registry.SpecFromEntry(k, e, impl)
		if isMCP {
			spec.Fingerprint = mcpnode.Fingerprint(mcp)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// Catalog returns the usable node types: built-ins plus registry.json's MCP
// entries, with the settings allow/deny filter applied (denied types are
// absent; Catalog.DeniedReason says why), and the settings it used. The
// Catalog is the caller's; the specs in it must not be modified (see
// AllSpecs): one that changes a spec replaces it (Catalog.Replace).
func (a *App) Catalog(ctx context.Context) (*registry.Catalog, *settings.Settings, error) {
	cs, err := a.catalogSpecs(ctx)
	if err != nil {
		return nil, nil, err
	}
	cat := registry.NewCatalog(cs.specs)
	cat.IncludeHidden = cs.hidden
	for _, s := range cs.specs {
		if reason, ok := cs.denied[s.Type]; ok {
			cat.Deny(s.Type, reason)
		}
	}
	return cat, cs.st, nil
}

// coreEntriesStale compares registry.json's core entries with the built-ins
// (made with the default LLM model). A File found current is remembered, so
// a long-lived process, which gets the same File while registry.json is
// unchanged, compares once.
func coreEntriesStale(f *registry.File, core []*node.Spec, model string) (map[string]*registry.Entry, bool) {
	coreChecked.mu.Lock()
	current := coreChecked.f == f && coreChecked.model == model
	coreChecked.mu.Unlock()
	if current {
		return nil, false
	}
	want, stale := compareCoreEntries(f, core)
	if !stale {
		coreChecked.mu.Lock()
		coreChecked.f, coreChecked.model = f, model
		coreChecked.mu.Unlock()
	}
	return want, stale
}

// coreChecked is the last registry File whose core entries were current.
var coreChecked struct {
	mu    sync.Mutex
	f     *registry.File
	model string
}

func compareCoreEntries(f *registry.File, core []*node.Spec) (map[string]*registry.Entry, bool) {
	want := make(map[string]*registry.Entry, len(core))
	for _, s := range core {
		want[s.Type] = registry.EntryFromSpec(s)
	}
	have := 0
	stale := false
	for k, e := range f.Nodes {
		if e.Type != registry.TypeCore {
			continue
		}
		have++
		w, ok := want[k]
		if !ok || !sameJSON(w, e) {
			stale = true
		}
	}
	if have != len(want) {
		stale = true
	}
	return want, stale
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
