package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/validate"
	"github.com/pflow-go/pflow/internal/workflow"
)

// liveDrift checks the MCP tools a workflow's steps call against their
// servers as they are now: a tool whose input schema
// changed since it was synced, or that is gone, is a warning naming the
// step and the fix. It starts each server the workflow uses once, so only
// pflow --validate-only asks for it (RunRequest.CheckLive).
func (a *App) liveDrift(ctx context.Context, w *workflow.Workflow, st *settings.Settings) []validate.Diagnostic {
	f, err := a.RegistryStore().LoadWithoutSchemas()
	if err != nil {
		return nil
	}
	byServer := map[string][]*workflow.Node{}
	for _, n := range w.Nodes {
		if e := f.Nodes[n.Type]; e != nil && e.MCP != nil && e.MCP.SchemaHash != "" {
			byServer[e.MCP.Server] = append(byServer[e.MCP.Server], n)
		}
	}
	var out []validate.Diagnostic
	for server, nodes := range byServer {
		srv, err := mcpclient.LoadServer(a.Paths.MCPServers, server, a.EnvLookup(st), a.Log)
		if err != nil {
			continue // the static checks already say what is wrong with it
		}
		a.withSignIn(srv)
		srv.Network = a.netPolicy(st, false)
		tools, err := mcpclient.Discover(ctx, srv, a.Log)
		if err != nil {
			out = append(out, validate.Diagnostic{Severity: validate.SeverityWarning, NodeID: nodes[0].ID, Param: "type", Line: nodes[0].Line,
				Message: fmt.Sprintf("Could not check the tools of MCP server %s against the registry: %s", server, strings.SplitN(mcpclient.ErrorText(err), "\n", 2)[0]),
				Fixes:   []pferr.Fix{{Text: "To see what is wrong with it, {do}.", Do: pferr.PersonOnly("mcp test " + server)}}})
			continue
		}
		live := map[string]string{}
		for _, t := range tools {
			live[t.Name] = mcpclient.SchemaHash(t.InputSchema)
		}
		for _, n := range nodes {
			e := f.Nodes[n.Type]
			hash, ok := live[e.MCP.Tool]
			switch {
			case !ok:
				out = append(out, validate.Diagnostic{Severity: validate.SeverityWarning, NodeID: n.ID, Param: "type", Line: n.Line,
					Message: fmt.Sprintf("Step '%s': tool %s is no longer offered by MCP server %s (it was at the last sync)", n.ID, e.MCP.Tool, server),
					Fixes: []pferr.Fix{{Text: "{do} to re-read its tools.", Do: pferr.SyncServer(server)},
						{Text: "For what it offers now, {do}.", Do: pferr.PersonOnly("mcp tools " + server)}}})
			case hash != e.MCP.SchemaHash:
				out = append(out, validate.Diagnostic{Severity: validate.SeverityWarning, NodeID: n.ID, Param: "type", Line: n.Line,
					Message: fmt.Sprintf("Step '%s': tool %s of MCP server %s changed since it was synced (its parameters differ)", n.ID, e.MCP.Tool, server),
					Fixes:   []pferr.Fix{{Text: "{do} and validate again: the checks then use its new parameters.", Do: pferr.SyncServer(server)}}})
			}
		}
	}
	return out
}
