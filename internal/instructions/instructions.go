// Package instructions holds pflow's guides for AI agents, embedded in the
// binary: the full guide (MCP resource pflow://instructions), the sandbox
// variant for agents with no shell or shared filesystem
// (pflow://instructions/sandbox), and the short server instructions sent in
// the MCP initialize result. `pflow instructions` prints the same texts.
package instructions

import _ "embed"

//go:embed agent.md
var agent string

//go:embed sandbox.md
var sandbox string

//go:embed server.md
var server string

// Agent returns the complete workflow-building guide (markdown).
func Agent() string { return agent }

// Sandbox returns the guide for agents without a shell or filesystem (markdown).
func Sandbox() string { return sandbox }

// Server returns the short instructions of the MCP initialize result.
func Server() string { return server }
