package mcpclient

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/value"
)

// RegistryEntries turns a server's discovered tools into registry entries
// (see docs/decisions.md, "Registry entries for MCP tools"), keyed by node
// type. Tools whose sanitised names collide get a
// numeric suffix and a warning.
func RegistryEntries(server string, tools []*mcp.Tool) (map[string]*registry.Entry, []string) {
	out := map[string]*registry.Entry{}
	var warnings []string
	sorted := append([]*mcp.Tool(nil), tools...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, t := range sorted {
		if t == nil || t.Name == "" {
			continue
		}
		base := NodeType(server, t.Name)
		if SanitizeToolName(t.Name) == "" {
			warnings = append(warnings, fmt.Sprintf("tool %q of server '%s' has no usable characters in its name; skipped", t.Name, server))
			continue
		}
		key := base
		for i := 2; out[key] != nil; i++ {
			key = fmt.Sprintf("%s-%d", base, i)
		}
		if key != base {
			warnings = append(warnings, fmt.Sprintf("tools %q and %q of server '%s' both become %s; the second is registered as %s", out[base].MCP.Tool, t.Name, server, base, key))
		}
		desc := t.Description
		if strings.TrimSpace(desc) == "" {
			desc = "MCP tool from " + server
		}
		in := schemaMap(t.InputSchema)
		if in == nil {
			in = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		params := SchemaFields(in)
		if params == nil {
			params = []node.Field{}
		}
		out[key] = &registry.Entry{
			ClassName: "MCPNode",
			FilePath:  "virtual://mcp",
			Type:      registry.TypeMCP,
			Kind:      "mcp",
			Group:     "mcp-" + server,
			Interface: node.Interface{
				Description: desc,
				Params:      params,
				Outputs:     OutputFields(t.OutputSchema),
				// The built-in entries' shape; the error classes an MCP step may
				// also take are allowed by validation for every mcp- type.
				Actions:     []string{"default", "error"},
				ExtraParams: in["additionalProperties"] == true || asObject(in["additionalProperties"]),
			},
			MCP: &registry.MCPInfo{Server: server, Tool: t.Name, InputSchema: in, OutputSchema: schemaMap(t.OutputSchema), SchemaHash: SchemaHash(t.InputSchema)},
		}
		if a := t.Annotations; a != nil && (a.ReadOnlyHint || a.IdempotentHint || a.DestructiveHint != nil || a.OpenWorldHint != nil) {
			out[key].MCP.Hints = &registry.MCPHints{ReadOnly: a.ReadOnlyHint, Idempotent: a.IdempotentHint,
				Destructive: a.DestructiveHint, OpenWorld: a.OpenWorldHint}
		}
	}
	return out, warnings
}

func schemaMap(s any) map[string]any {
	if s == nil {
		return nil
	}
	if m, ok := s.(map[string]any); ok {
		return value.Normalize(m).(map[string]any)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	v, err := value.DecodeJSON(b)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

func asObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}
