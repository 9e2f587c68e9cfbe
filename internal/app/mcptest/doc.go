// Package mcptest holds the tests of the MCP use-cases of internal/app
// (add, list, remove, sync, tools, info, auto re-sync) against the
// fault-injection fake server. They live here because the fake server needs
// the test binary's TestMain.
package mcptest
