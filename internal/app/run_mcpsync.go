package app

import "context"

// syncMCPForRun re-syncs MCP servers before a run that uses MCP nodes.
// TODO(lead): call a.EnsureMCPSynced once the MCP client lands.
func (a *App) syncMCPForRun(ctx context.Context, types []string) error { return nil }
