package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/value"
)

// ---- add / list / remove ----

// MCPAddSource is what one 'pflow mcp add' argument contributed.
type MCPAddSource struct {
	Source  string   `json:"source"` // "JSON input" or the file's base name
	Servers []string `json:"servers"`
	Notes   []string `json:"notes,omitempty"`
}

// AddMCPServers parses every source (inline JSON or config files in the
// mcpServers format, including Claude Desktop, Claude Code and Cursor
// files), validates every entry and saves them in one locked, atomic write.
// Nothing is saved when any source is invalid. Existing names are updated.
// MCPAddOptions change what AddMCPServers stores.
type MCPAddOptions struct {
	// Insecure marks every added http/sse server "insecure": true, which
	// allows a plain http:// url to a remote host.
	Insecure bool
}

func (a *App) AddMCPServers(ctx context.Context, sources []string, opts ...MCPAddOptions) ([]MCPAddSource, error) {
	var o MCPAddOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if len(sources) == 0 {
		return nil, pferr.New(pferr.Usage, "Give at least one config file or JSON string").
			WithHint(`Example: pflow mcp add '{"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}'`)
	}
	var parsed []*mcpclient.Source
	for _, src := range sources {
		s, err := mcpclient.ParseSource(src)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, s)
		for _, srv := range s.Servers {
			mcpclient.AddConfigSecrets(a.Secrets, srv.Name, srv.Config, a.LookupProcessEnv)
		}
	}
	st, _ := a.Settings()
	for _, s := range parsed {
		for _, srv := range s.Servers {
			if err := a.checkAddedHost(ctx, srv.Name, mcpclient.DecodeConfig(srv.Config).URL, st); err != nil {
				return nil, err
			}
		}
	}
	err := mcpclient.Update(ctx, a.Paths.MCPServers, func(f *mcpclient.File) error {
		for _, s := range parsed {
			for _, srv := range s.Servers {
				if o.Insecure && mcpclient.DecodeConfig(srv.Config).Transport != "stdio" {
					srv.Config["insecure"] = true
				}
				f.Servers[srv.Name] = srv.Config
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]MCPAddSource, 0, len(parsed))
	for _, s := range parsed {
		r := MCPAddSource{Source: s.Label, Notes: s.Notes, Servers: []string{}}
		for _, srv := range s.Servers {
			r.Servers = append(r.Servers, srv.Name)
		}
		out = append(out, r)
	}
	return out, nil
}

// checkAddedHost refuses to add a remote server whose url's host is, or
// resolves to, a link-local or cloud metadata address that settings.json's
// "network" "allow_hosts" does not name: pflow would refuse every
// connection to it (docs/security.md, "Remote MCP servers"), so adding it
// takes that setting first. A url built from ${VAR} is checked when it is
// connected to.
func (a *App) checkAddedHost(ctx context.Context, name, raw string, st *settings.Settings) error {
	if raw == "" || strings.Contains(raw, "${") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil // the connection says what is wrong with it
	}
	host := u.Hostname()
	pol := a.netPolicy(st, false)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, ip := range netpolicy.Resolve(rctx, host) {
		class := netpolicy.Class(ip)
		if !netpolicy.LinkLocal(class) || pol.AllowsHost(host, ip) {
			continue
		}
		where := host
		if ip.String() != host {
			where = fmt.Sprintf("%s (%s)", host, ip)
		}
		return pferr.Newf(pferr.Security, "MCP server '%s' was not added: its url's host %s is a %s address, where pflow reaches no MCP server unless settings.json allows it", name, where, class).
			WithHint(fmt.Sprintf(`If this server is meant to be reached there, add "network": {"allow_hosts": [%q]} to settings.json (%s), then add it again; its connections are then allowed, and the http node's requests to that host too.`, host, a.Paths.Settings))
	}
	return nil
}

// MCPServers returns the configured servers with secrets masked: literal
// values of secret-looking env keys, headers and auth credentials, and
// secret args in every form mcpclient.ArgSecrets knows (--api-key=X,
// --token X, PASSWORD=X), show their first 3 characters + "***" (as settings
// do), and every other secret the redactor knows — URL passwords and api
// keys — is replaced by redact.Redacted. ${VAR} references are shown as
// written: they hold no secret.
func (a *App) MCPServers() (map[string]map[string]any, error) {
	f, err := mcpclient.LoadFile(a.Paths.MCPServers)
	if err != nil {
		return nil, err
	}
	st, err := settings.Load(a.Paths.Settings, io.Discard)
	if err != nil {
		st = nil
	}
	red := a.Redactor(st)
	out := map[string]map[string]any{}
	for name, cfg := range f.Servers {
		out[name] = maskStrings(red, maskEntry(cfg)).(map[string]any)
	}
	return out, nil
}

// maskStrings masks the secrets red knows in every string of v (values
// only: names are kept, so "${GITHUB_TOKEN}" under GITHUB_TOKEN stays).
func maskStrings(red *redact.Redactor, v any) any {
	switch x := v.(type) {
	case string:
		return red.String(x)
	case []any:
		for i, e := range x {
			x[i] = maskStrings(red, e)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = maskStrings(red, e)
		}
		return x
	}
	return v
}

func maskValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	if strings.HasPrefix(strings.TrimSpace(s), "${") && strings.HasSuffix(strings.TrimSpace(s), "}") {
		return s
	}
	if strings.HasPrefix(s, "Bearer ") {
		rest := s[len("Bearer "):]
		if strings.HasPrefix(rest, "${") {
			return s
		}
		return "Bearer " + settings.Mask(rest)
	}
	return settings.Mask(s)
}

func maskEntry(cfg map[string]any) map[string]any {
	out := value.Clone(cfg).(map[string]any)
	for _, section := range []string{"env", "headers"} {
		m, _ := out[section].(map[string]any)
		for k, v := range m {
			if redact.IsSecretKey(k) {
				m[k] = maskValue(v)
			}
		}
	}
	if auth, ok := out["auth"].(map[string]any); ok {
		for _, k := range mcpclient.SecretAuthKeys() {
			if v, has := auth[k]; has {
				auth[k] = maskValue(v)
			}
		}
	}
	for _, k := range mcpclient.LooseSecretKeys() {
		if v, has := out[k]; has {
			out[k] = maskValue(v)
		}
	}
	if args, ok := out["args"].([]any); ok {
		strs := make([]string, len(args))
		for i, x := range args {
			strs[i], _ = x.(string)
		}
		for i, s := range mcpclient.MaskArgs(strs, func(v string) string { return value.Stringify(maskValue(v)) }) {
			if s != strs[i] {
				args[i] = s
			}
		}
	}
	return out
}

// RemoveMCPServer removes a server from the config and exactly its tools
// from the registry (not those of a server whose name extends it). It
// returns the number of tools removed.
func (a *App) RemoveMCPServer(ctx context.Context, name string) (int, error) {
	err := mcpclient.Update(ctx, a.Paths.MCPServers, func(f *mcpclient.File) error {
		if _, ok := f.Servers[name]; !ok {
			return MCPServerNotFound(f.Names(), name)
		}
		delete(f.Servers, name)
		return nil
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	err = a.RegistryStore().Patch(ctx, func(f *registry.File) error {
		for k, e := range f.Nodes {
			if e.MCP != nil && e.MCP.Server == name {
				delete(f.Nodes, k)
				removed++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	a.updateSyncState(ctx, func(st *mcpSyncState) { delete(st.Servers, name) })
	return removed, nil
}

// ---- sync ----

// MCPSyncResult is the outcome of syncing one server.
type MCPSyncResult struct {
	Server     string   `json:"server"`
	Discovered int      `json:"tools_discovered"`
	Registered int      `json:"tools_registered"`
	Removed    int      `json:"tools_removed"`
	Nodes      []string `json:"nodes"`
	// What changed since the last sync: node types new
	// to the registry, whose input schema changed, and that are gone. A
	// first sync of a server reports only Added.
	Added        []string `json:"added,omitempty"`
	Changed      []string `json:"changed,omitempty"`
	RemovedNodes []string `json:"removed,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	Error        string   `json:"error,omitempty"`
	// Skipped says why the server was not synced ("disabled").
	Skipped string `json:"skipped,omitempty"`
	// Protocol is the MCP protocol revision the server spoke.
	Protocol string `json:"protocol_version,omitempty"`
}

// MCPSyncEvent reports progress: Done is false when a server starts.
type MCPSyncEvent struct {
	Server string
	Index  int
	Total  int
	Done   bool
	Result *MCPSyncResult
}

// namedServers loads the MCP config and resolves the servers a command
// names (pflow mcp sync|test <server>... | --all): every configured one
// with all, else names, each of which must be configured.
func (a *App) namedServers(names []string, all bool) (*mcpclient.File, []string, error) {
	f, err := mcpclient.LoadFile(a.Paths.MCPServers)
	if err != nil {
		return nil, nil, err
	}
	names, err = serverNames(f, names, all)
	return f, names, err
}

func serverNames(f *mcpclient.File, names []string, all bool) ([]string, error) {
	switch {
	case len(names) == 0 && !all:
		return nil, pferr.New(pferr.Usage, "Specify a server name or use --all")
	case len(names) > 0 && all:
		return nil, pferr.New(pferr.Usage, "Cannot specify both server name and --all")
	case all:
		names = f.Names()
		if len(names) == 0 {
			return nil, pferr.New(pferr.NotFound, "No MCP servers configured.").
				WithHint(`Add one with: pflow mcp add '{"name": {"command": "...", "args": [...]}}'`)
		}
	}
	for _, n := range names {
		if _, ok := f.Servers[n]; !ok {
			return nil, MCPServerNotFound(f.Names(), n).
				WithFix(pferr.Fix{Text: "To add it, {do}.", Do: pferr.PersonOnly("mcp add <config>")})
		}
	}
	return names, nil
}

// MCPServerNotFound is the error for a server name that is not among the
// configured ones (sorted).
func MCPServerNotFound(configured []string, name string) *pferr.Error {
	avail := strings.Join(configured, ", ")
	if avail == "" {
		avail = "none"
	}
	return pferr.Newf(pferr.NotFound, "Server '%s' not found", name).WithHint("Configured MCP servers: " + avail + ".")
}

// SyncMCP discovers the tools of the named servers (every server when
// names is empty and all is set) and registers each as mcp-<server>-<tool>.
// Tools a server no longer has are removed; a server that fails keeps its
// previous tools. The registry is backed up before it is modified. One
// server's failure does not stop the others; the error is reported in its
// result and in the returned error when every server failed.
func (a *App) SyncMCP(ctx context.Context, names []string, all bool, progress func(MCPSyncEvent)) ([]MCPSyncResult, error) {
	return a.syncMCP(ctx, names, all, progress, false)
}

// syncMCP is SyncMCP; agent is set when a run an agent started asked for
// it (its remote servers are reached under the agent's network rules).
func (a *App) syncMCP(ctx context.Context, names []string, all bool, progress func(MCPSyncEvent), agent bool) ([]MCPSyncResult, error) {
	// The servers started to list their tools, and everything they start,
	// are stopped when the sync ends, even a descendant that left its group.
	ctx, tracker := proc.Track(ctx)
	defer tracker.Close()
	f, names, err := a.namedServers(names, all)
	if err != nil {
		return nil, err
	}
	st, err := a.Settings()
	if err != nil {
		return nil, err
	}
	lookup, pol := a.EnvLookup(st), a.netPolicy(st, agent)
	results := make([]MCPSyncResult, 0, len(names))
	failed := 0
	hashes := map[string]string{}
	tools := map[string][]string{}
	skipped := 0
	for i, name := range names {
		if mcpclient.DecodeConfig(f.Servers[name]).Disabled {
			if !all {
				return results, pferr.Newf(pferr.Usage, "Server '%s' is disabled (\"disabled\": true in mcp-servers.json)", name).
					WithHint("Remove \"disabled\": true from its entry to use it (pflow mcp add with the entry without it), then sync again.")
			}
			skipped++
			results = append(results, MCPSyncResult{Server: name, Skipped: "disabled"})
			if progress != nil {
				progress(MCPSyncEvent{Server: name, Index: i, Total: len(names), Done: true, Result: &results[len(results)-1]})
			}
			continue
		}
		if progress != nil {
			progress(MCPSyncEvent{Server: name, Index: i, Total: len(names)})
		}
		r := a.syncOne(ctx, name, f.Servers[name], lookup, pol)
		if r.Error != "" {
			failed++
		} else {
			tools[name] = r.Nodes
		}
		hashes[name] = entryHash(f.Servers[name])
		results = append(results, r)
		if progress != nil {
			progress(MCPSyncEvent{Server: name, Index: i, Total: len(names), Done: true, Result: &results[len(results)-1]})
		}
	}
	a.updateSyncState(ctx, func(st *mcpSyncState) {
		for k, v := range hashes {
			st.Servers[k] = v
		}
		for k, v := range tools {
			st.Tools[k] = v
			delete(st.Stale, k)
		}
	})
	if failed == len(names)-skipped && failed > 0 {
		if len(names) == 1 {
			return results, pferr.Newf(pferr.Execution, "Tool discovery failed for %s: %s", names[0], results[0].Error)
		}
		return results, pferr.Newf(pferr.Execution, "Tool discovery failed for every enabled server (%d)", failed)
	}
	return results, nil
}

func (a *App) syncOne(ctx context.Context, name string, raw map[string]any, lookup func(string) (string, bool), pol *node.NetPolicy) MCPSyncResult {
	r := MCPSyncResult{Server: name, Nodes: []string{}}
	srv, err := mcpclient.Resolve(name, raw, lookup, a.Log)
	if err != nil {
		r.Error = mcpclient.ErrorText(err)
		return r
	}
	a.withSignIn(srv)
	srv.Network = pol
	tools, protocol, err := mcpclient.DiscoverVersion(ctx, srv, a.Log)
	if err != nil {
		r.Error = mcpclient.ErrorText(err)
		return r
	}
	reg := a.registerMCPTools(ctx, name, protocol, tools)
	reg.Discovered = len(tools)
	return reg
}

// RegisterMCPTools writes the tools a server listed into the registry as
// its nodes, removing the server's nodes for tools it no longer has. A
// node type another server already owns is kept for that server and
// reported (server a-b tool c and server a tool b-c both make mcp-a-b-c).
func (a *App) RegisterMCPTools(ctx context.Context, name string, tools []*mcp.Tool) MCPSyncResult {
	return a.registerMCPTools(ctx, name, "", tools)
}

// registerMCPTools is RegisterMCPTools, recording the protocol revision the
// server spoke (shown by pflow mcp info).
func (a *App) registerMCPTools(ctx context.Context, name, protocol string, tools []*mcp.Tool) MCPSyncResult {
	r := MCPSyncResult{Server: name, Nodes: []string{}, Discovered: len(tools), Protocol: protocol}
	entries, warnings := mcpclient.RegistryEntries(name, tools)
	for _, e := range entries {
		e.MCP.Protocol = protocol
	}
	r.Warnings = append(r.Warnings, warnings...)
	// Patch: the other entries are written back as stored, only this
	// server's are encoded (a registry can hold thousands of tools).
	err := a.RegistryStore().Patch(ctx, func(f *registry.File) error {
		if f.Nodes == nil {
			f.Nodes = map[string]*registry.Entry{}
		}
		for k, e := range f.Nodes {
			if e.MCP != nil && e.MCP.Server == name {
				if _, still := entries[k]; !still {
					delete(f.Nodes, k)
					r.Removed++
					r.RemovedNodes = append(r.RemovedNodes, k)
				}
			}
		}
		slices.Sort(r.RemovedNodes)
		for _, k := range value.SortedKeys(entries) {
			e := entries[k]
			old, ok := f.Nodes[k]
			switch {
			case ok && old.MCP != nil && old.MCP.Server != name:
				// Two servers whose names and tools join into one node type
				// (server a-b tool c, server a tool b-c): the first keeps it.
				r.Warnings = append(r.Warnings, fmt.Sprintf("tool %q of MCP server '%s' would be %s, which is already the node of tool %q of MCP server '%s'; it is not registered. Rename one of the servers (pflow mcp add under another name, then pflow mcp remove the old one) to use both",
					e.MCP.Tool, name, k, old.MCP.Tool, old.MCP.Server))
				delete(entries, k)
				continue
			case ok && old.MCP == nil && !f.SameAsStored(k, e):
				// Another kind of entry is replaced, with a warning.
				r.Warnings = append(r.Warnings, fmt.Sprintf("registry entry %s already existed (type %q) and was overwritten by the tool %q of MCP server '%s'", k, old.Type, e.MCP.Tool, name))
			case !ok:
				r.Added = append(r.Added, k)
			case old.MCP != nil && old.MCP.SchemaHash != "" && old.MCP.SchemaHash != e.MCP.SchemaHash:
				// (Patch loads entries without their schemas: the hash is
				// what the last sync saw.)
				r.Changed = append(r.Changed, k)
			}
			f.Nodes[k] = e
		}
		return nil
	})
	if err != nil {
		r.Error = mcpclient.ErrorText(err)
		return r
	}
	r.Registered = len(entries)
	r.Nodes = value.SortedKeys(entries)
	for _, w := range r.Warnings {
		fmt.Fprintf(a.Log, "Warning: %s\n", w)
	}
	return r
}

// ---- auto re-sync before runs ----

type mcpSyncState struct {
	Servers map[string]string `json:"servers"` // server → hash of its config entry at the last sync
	// Tools are the node types each server's last successful sync
	// registered; a used one missing from the registry means the registry
	// lost it (restored from its backup, edited) and the server is synced again.
	Tools map[string][]string `json:"tools,omitempty"`
	// Stale servers had their hash forgotten because registry.json was
	// restored from its backup; their next sync clears the mark.
	Stale map[string]bool `json:"stale,omitempty"`
}

func (a *App) syncStatePath() string { return filepath.Join(a.Paths.Cache, "mcp-sync.json") }

func (a *App) loadSyncState() *mcpSyncState {
	data, err := os.ReadFile(a.syncStatePath())
	if err != nil {
		data = nil
	}
	return decodeSyncState(data)
}

// loadSyncStateShared is loadSyncState for a reader that does not modify
// it: decoded once while the file is unchanged (fsutil.Memo).
func (a *App) loadSyncStateShared() *mcpSyncState {
	st, err := sharedSyncStates.Load(a.syncStatePath(), func(data []byte) (*mcpSyncState, error) { return decodeSyncState(data), nil })
	if err != nil {
		return decodeSyncState(nil)
	}
	return st
}

var sharedSyncStates fsutil.Memo[*mcpSyncState]

// decodeSyncState is the sync state data holds (none: nil or not JSON).
func decodeSyncState(data []byte) *mcpSyncState {
	st := &mcpSyncState{Servers: map[string]string{}}
	if data != nil {
		if json.Unmarshal(data, st) != nil || st.Servers == nil {
			st.Servers = map[string]string{}
		}
	}
	if st.Tools == nil {
		st.Tools = map[string][]string{}
	}
	if st.Stale == nil {
		st.Stale = map[string]bool{}
	}
	return st
}

// markMCPSyncStale forgets every server's last-sync config hash, so each
// server is synced again on the next run that uses it (registry.json was
// restored from a backup that may predate its last syncs).
func (a *App) markMCPSyncStale() {
	a.updateSyncState(context.Background(), func(st *mcpSyncState) {
		for k := range st.Servers {
			st.Stale[k] = true
		}
		clear(st.Servers)
	})
}

// updateSyncState is a locked read-modify-write of the sync state. A
// failure only costs a needless re-sync on the next run, so it is a warning.
func (a *App) updateSyncState(ctx context.Context, fn func(st *mcpSyncState)) {
	lock, err := fsutil.LockFile(ctx, a.syncStatePath(), 10*time.Second)
	if err == nil {
		defer lock.Unlock()
		st := a.loadSyncState()
		fn(st)
		b, _ := json.MarshalIndent(st, "", "  ")
		err = fsutil.WriteFileAtomic(a.syncStatePath(), append(b, '\n'), 0o600)
	}
	if err != nil {
		fmt.Fprintf(a.Log, "Warning: cannot record the MCP sync state (%v); the next run that uses these servers will sync them again. Check that %s is writable.\n", err, a.Paths.Cache)
	}
}

func entryHash(cfg map[string]any) string {
	b, _ := json.Marshal(cfg) // map keys are sorted: a canonical form
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// EnsureMCPSynced re-syncs, before a run, every server used by nodeTypes
// whose configuration changed since its last sync (or that was never
// synced, or whose sync state was marked stale because registry.json was
// restored from its backup), and every server one of whose used tools its
// last sync registered but the registry no longer has. A server that fails
// keeps its previous tools, with a warning on a.Log. It never fails the run
// itself: validation reports missing tools.
func (a *App) EnsureMCPSynced(ctx context.Context, nodeTypes []string) error {
	return a.ensureMCPSynced(ctx, nodeTypes, false)
}

// ensureMCPSynced is EnsureMCPSynced for a run; agent is set for a run an
// agent started (its network rules apply to the sync's connections).
func (a *App) ensureMCPSynced(ctx context.Context, nodeTypes []string, agent bool) error {
	var mcpTypes []string
	for _, t := range nodeTypes {
		if strings.HasPrefix(t, "mcp-") {
			mcpTypes = append(mcpTypes, t)
		}
	}
	if len(mcpTypes) == 0 {
		return nil
	}
	f, err := mcpclient.LoadFileShared(a.Paths.MCPServers)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	// The registry first: loading it restores a corrupt file from its
	// backup, which marks the sync state stale before it is read below.
	reg, rerr := a.RegistryStore().LoadWithoutSchemas()
	st := a.loadSyncStateShared()
	need := map[string]bool{}
	var missing, restored []string
	for _, t := range mcpTypes {
		server, _, err := mcpclient.ParseNodeType(t, f.Names())
		if err != nil {
			continue
		}
		if st.Servers[server] != entryHash(f.Servers[server]) {
			if st.Stale[server] && !need[server] {
				restored = append(restored, server)
			}
			need[server] = true
			continue
		}
		// Synced with this config, yet the tool is gone from the registry:
		// re-sync when the last sync registered it (or did not record what
		// it registered), not for a tool the server never had.
		if rerr == nil && reg.Nodes[t] == nil {
			if known, ok := st.Tools[server]; !ok || slices.Contains(known, t) {
				need[server] = true
				missing = append(missing, t)
			}
		}
	}
	if len(need) == 0 {
		return nil
	}
	names := value.SortedKeys(need)
	switch {
	case len(missing) > 0:
		fmt.Fprintf(a.Log, "MCP tools missing from the registry (%s), syncing %s...\n", strings.Join(missing, ", "), strings.Join(names, ", "))
	case len(restored) == len(names):
		fmt.Fprintf(a.Log, "registry.json was restored from its backup, syncing %s...\n", strings.Join(names, ", "))
	default:
		fmt.Fprintf(a.Log, "MCP config changed, syncing %s...\n", strings.Join(names, ", "))
	}
	results, _ := a.syncMCP(ctx, names, false, nil, agent)
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(a.Log, "Warning: could not sync MCP server '%s'; keeping its previously registered tools. Run 'pflow mcp sync %s' to retry.\n%s\n", r.Server, r.Server, r.Error)
		}
	}
	return nil
}

// ---- tools / info ----

// MCPTool describes one registered MCP tool.
type MCPTool struct {
	Node        string       `json:"node_name"`
	Server      string       `json:"server"`
	Tool        string       `json:"tool"`
	Description string       `json:"description"`
	Params      []node.Field `json:"params"`
	Outputs     []node.Field `json:"outputs"`
	// Protocol is the MCP protocol revision its server spoke at the last
	// sync ("" when that sync did not record it).
	Protocol string `json:"protocol_version,omitempty"`
}

// MCPTools lists registered MCP tools, of one server (exact name) or all.
func (a *App) MCPTools(server string) ([]MCPTool, error) {
	f, err := a.RegistryStore().Load()
	if err != nil {
		return nil, err
	}
	var out []MCPTool
	for _, k := range value.SortedKeys(f.Nodes) {
		e := f.Nodes[k]
		if e.MCP == nil || (server != "" && e.MCP.Server != server) {
			continue
		}
		out = append(out, MCPTool{Node: k, Server: e.MCP.Server, Tool: e.MCP.Tool, Description: e.Interface.Description, Params: e.Interface.Params, Outputs: e.Interface.Outputs, Protocol: e.MCP.Protocol})
	}
	return out, nil
}

// MCPToolInfo returns one registered tool, or a not-found error with
// suggestions.
func (a *App) MCPToolInfo(nodeType string) (*MCPTool, error) {
	tools, err := a.MCPTools("")
	if err != nil {
		return nil, err
	}
	var similar []string
	for i := range tools {
		if tools[i].Node == nodeType {
			return &tools[i], nil
		}
		if strings.Contains(tools[i].Node, nodeType) || strings.Contains(nodeType, tools[i].Node) {
			similar = append(similar, tools[i].Node)
		}
	}
	e := pferr.Newf(pferr.NotFound, "Tool '%s' not found", nodeType)
	switch {
	case len(tools) == 0:
		e.Hint = "No MCP tools are registered."
		e.Fixes = []pferr.Fix{{Text: "To discover them, {do}.", Do: pferr.SyncServer("--all")}}
	case len(similar) > 0:
		if len(similar) > 5 {
			similar = similar[:5]
		}
		e.Suggestions = similar
		e.Hint = "Did you mean one of these tools?\n  - " + strings.Join(similar, "\n  - ")
	default:
		names := make([]string, 0, 10)
		for i := 0; i < len(tools) && i < 10; i++ {
			names = append(names, tools[i].Node)
		}
		e.Hint = "Available tools:\n  - " + strings.Join(names, "\n  - ")
		if len(tools) > 10 {
			e.Hint += fmt.Sprintf("\n  ... and %d more", len(tools)-10)
			e.Fixes = []pferr.Fix{{Text: "To see them all, {do}.", Do: pferr.PersonOnly("mcp tools")}}
		}
	}
	return nil, e
}

// MCPTestResult is what `pflow mcp test` found for one server.
type MCPTestResult struct {
	Server    string  `json:"server"`
	OK        bool    `json:"ok"`
	Transport string  `json:"transport"`
	Tools     int     `json:"tools"`
	LatencyMS float64 `json:"latency_ms"` // connect + initialize + tools/list
	Protocol  string  `json:"protocol_version,omitempty"`
	Error     string  `json:"error,omitempty"`
	Skipped   string  `json:"skipped,omitempty"`
	// Changed lists differences from the registry: tools added or gone
	// since the last sync.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// TestMCPServers connects to each named server (or all), initializes,
// lists its tools and closes, reporting the time it took and any problem,
// and how its tools differ from the registry. Nothing is written.
func (a *App) TestMCPServers(ctx context.Context, names []string, all bool) ([]MCPTestResult, error) {
	ctx, tracker := proc.Track(ctx)
	defer tracker.Close()
	f, names, err := a.namedServers(names, all)
	if err != nil {
		return nil, err
	}
	st, err := a.Settings()
	if err != nil {
		return nil, err
	}
	lookup, pol := a.EnvLookup(st), a.netPolicy(st, false)
	reg, _ := a.RegistryStore().LoadWithoutSchemas()
	var out []MCPTestResult
	for _, name := range names {
		raw := f.Servers[name]
		c := mcpclient.DecodeConfig(raw)
		r := MCPTestResult{Server: name, Transport: c.Transport}
		if c.Disabled {
			r.Skipped = "disabled"
			out = append(out, r)
			continue
		}
		start := time.Now()
		srv, err := mcpclient.Resolve(name, raw, lookup, io.Discard)
		if err == nil {
			a.withSignIn(srv)
			srv.Network = pol
			var s *mcpclient.Session
			if s, err = mcpclient.Connect(ctx, srv, io.Discard); err == nil {
				var tools []*mcp.Tool
				tools, err = s.ListTools(ctx)
				r.Protocol = s.ProtocolVersion()
				s.Close()
				if err == nil {
					r.OK, r.Tools = true, len(tools)
					entries, _ := mcpclient.RegistryEntries(name, tools)
					if reg != nil {
						for k := range entries {
							if reg.Nodes[k] == nil {
								r.Added = append(r.Added, k)
							}
						}
						for k, e := range reg.Nodes {
							if e.MCP != nil && e.MCP.Server == name && entries[k] == nil {
								r.Removed = append(r.Removed, k)
							}
						}
						sort.Strings(r.Added)
						sort.Strings(r.Removed)
					}
				}
			}
		}
		r.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			r.Error = mcpclient.ErrorText(err)
		}
		out = append(out, r)
	}
	return out, nil
}
