package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
)

func (s *Server) miscTools() []*toolDef {
	return []*toolDef{
		{
			name:  "settings_set",
			title: "Store an API key or credential",
			description: "Store an API key or other credential (e.g. OPENAI_API_KEY, GITHUB_TOKEN) in pflow's settings so " +
				"workflows and MCP servers can use it without passing it as an input. The value is written to " +
				"settings.json (mode 0600) and is never shown again in full, logged or written to traces.",
			input: object([]string{"key", "value"}, map[string]*jsonschema.Schema{
				"key":   str("Environment-variable style name, e.g. \"ANTHROPIC_API_KEY\"."),
				"value": str("The secret value."),
			}),
			data: props("What was stored (value masked).", map[string]*jsonschema.Schema{
				"key": str(""), "value": str("Masked."), "replaced": {Type: "boolean"},
			}, "key"),
			idempotent: true,
			run:        s.settingsSet,
		},
		{
			name:  "settings_get",
			title: "Check a stored setting",
			description: "Check whether a setting or credential is available to workflows and where it comes from " +
				"(the server's environment or settings.json). The value is always masked (first 3 characters + ***).",
			input: object([]string{"key"}, map[string]*jsonschema.Schema{
				"key": str("Environment-variable style name, e.g. \"GITHUB_TOKEN\"."),
			}),
			data: props("The setting (value masked).", map[string]*jsonschema.Schema{
				"key": str(""), "found": {Type: "boolean"}, "value": str("Masked."), "source": str("environment | settings"),
			}, "key", "found"),
			readOnly: true, idempotent: true,
			run: s.settingsGet,
		},
		{
			name:  "trace_read",
			title: "Read an execution trace",
			description: "Read the trace of a workflow run for debugging: every step with its status, timing, " +
				"resolved params and outputs (secrets redacted), the failure and the final outputs. Pass \"latest\" " +
				"(the default) or the trace_path / file name a workflow_execute result gave. Only files in pflow's " +
				"trace directory can be read.",
			input: object(nil, map[string]*jsonschema.Schema{
				"trace_file": withDefault(str("\"latest\", a trace file name, or the trace_path from workflow_execute."), "latest"),
			}),
			data: props("The trace.", map[string]*jsonschema.Schema{
				"path": str(""), "trace": openObject("The trace document."),
			}, "path", "trace"),
			readOnly: true, idempotent: true,
			run: s.traceRead,
		},
	}
}

func (s *Server) settingsSet(ctx context.Context, c *call) (any, error) {
	key, val := c.str("key"), c.str("value")
	replaced, err := c.app.SetSettingsEnv(ctx, key, val)
	if err != nil {
		return nil, err
	}
	data := &SettingSet{Key: key, Value: settings.Mask(val), Replaced: replaced,
		Message: fmt.Sprintf("Stored %s in settings; workflows can now use it.", key)}
	if _, ok := c.app.LookupProcessEnv(key); ok {
		data.Note = fmt.Sprintf("The server's own environment also sets %s, and that value takes precedence while this server runs.", key)
	}
	return data, nil
}

func (s *Server) settingsGet(ctx context.Context, c *call) (any, error) {
	key := c.str("key")
	got, err := c.app.GetSettingsEnvMasked(key)
	if err != nil {
		return nil, err
	}
	if !got.Found {
		e := &pferr.Error{Kind: pferr.NotFound, Message: fmt.Sprintf("setting '%s' is not set", key),
			Hint: "Store it with settings_set (key and value), or set it in the server's environment."}
		if keys, err := c.app.SettingsEnvKeys(); err == nil && len(keys) > 0 {
			e.Details = map[string]any{"available_keys": keys}
			e.Suggestions = []string{"Stored keys: " + strings.Join(keys, ", ")}
		}
		return nil, e
	}
	return &SettingGot{Key: got.Key, Found: true, Value: got.Masked, Source: got.Source}, nil
}

func (s *Server) traceRead(ctx context.Context, c *call) (any, error) {
	path, doc, err := c.app.ReadTraceFile(c.str("trace_file"))
	if err != nil {
		return nil, err
	}
	return &TraceResult{Path: path, Trace: doc}, nil
}
