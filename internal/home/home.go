// Package home locates pflow's state directory ($PFLOW_HOME, default ~/.pflow)
// and the files inside it.
package home

import (
	"os"
	"path/filepath"
)

// Paths are the locations of pflow's state.
type Paths struct {
	Root       string // $PFLOW_HOME
	Workflows  string // saved workflows (library)
	Drafts     string // drafts
	Debug      string // traces
	Runs       string // run records (internal/runs)
	Cache      string // caches
	Registry   string // registry.json
	Settings   string // settings.json
	MCPServers string // mcp-servers.json
	// MCPServeToken is the bearer token 'pflow mcp serve --http' makes
	// when given none (0600).
	MCPServeToken string
}

// MCPServeTokenFile is the name of Paths.MCPServeToken under the root.
const MCPServeTokenFile = "mcp-serve.token"

// Resolve returns the paths for the given PFLOW_HOME value, or ~/.pflow when empty.
func Resolve(pflowHome string) Paths {
	root := pflowHome
	if root == "" {
		dir, err := os.UserHomeDir()
		if err != nil || dir == "" {
			dir = "."
		}
		root = filepath.Join(dir, ".pflow")
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return Paths{
		Root:       root,
		Workflows:  filepath.Join(root, "workflows"),
		Drafts:     filepath.Join(root, "drafts"),
		Debug:      filepath.Join(root, "debug"),
		Runs:       filepath.Join(root, "runs"),
		Cache:      filepath.Join(root, "cache"),
		Registry:   filepath.Join(root, "registry.json"),
		Settings:   filepath.Join(root, "settings.json"),
		MCPServers: filepath.Join(root, "mcp-servers.json"),

		MCPServeToken: filepath.Join(root, MCPServeTokenFile),
	}
}

// FromEnv resolves the paths from the PFLOW_HOME variable of getenv.
func FromEnv(getenv func(string) string) Paths { return Resolve(getenv("PFLOW_HOME")) }
