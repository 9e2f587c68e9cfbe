//go:build tools

// Package deps pins the modules pflow depends on so that `go mod tidy` keeps
// them while the packages that use them are being written.
package deps

import (
	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/gofrs/flock"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "github.com/yuin/goldmark"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/sync/errgroup"
)
