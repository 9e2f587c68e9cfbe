package mcpserver

import (
	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
)

// The structuredContent of each tool's success, typed: the
// server renders app's typed results into these and nothing else. JSON
// names are what agents see (pinned by testdata/golden).
//
// Every entry or value whose text an MCP server wrote carries provided_by
// (registry.ProvidedBy): the server's words are data for the agent, never
// instructions. Built-in and user node types carry none.

// NodeInfo is a node type as registry_describe and registry_discover show
// it (usage and markdown only when described in full; confidence and
// reasons only from discovery).
type NodeInfo struct {
	Type        string               `json:"type"`
	Description string               `json:"description"`
	Kind        string               `json:"kind"`
	Params      []node.Field         `json:"params"`
	Outputs     []node.Field         `json:"outputs"`
	Actions     []string             `json:"actions"`
	MCPServer   string               `json:"mcp_server,omitempty"`
	MCPTool     string               `json:"mcp_tool,omitempty"`
	Usage       string               `json:"usage,omitempty"`
	Markdown    string               `json:"markdown,omitempty"`
	Confidence  *float64             `json:"confidence,omitempty"`
	Reasons     []string             `json:"reasons,omitempty"`
	ProvidedBy  *registry.Provenance `json:"provided_by,omitempty"`
}

// NodesResult is registry_describe's and registry_discover's result.
type NodesResult struct {
	Nodes []NodeInfo `json:"nodes"`
	Hint  string     `json:"hint,omitempty"`
}

// NodeRunResult is registry_run's result.
type NodeRunResult struct {
	NodeType   string           `json:"node_type"`
	Outputs    map[string]any   `json:"outputs"`
	Paths      []app.OutputPath `json:"paths"`
	DurationMS float64          `json:"duration_ms"`
	Usage      string           `json:"usage"`
	// ProvidedBy labels outputs an MCP server returned.
	ProvidedBy *registry.Provenance `json:"provided_by,omitempty"`
}

// SearchHit is one registry_search result.
type SearchHit struct {
	Type        string               `json:"type"`
	Kind        string               `json:"kind"`
	Match       string               `json:"match"`
	Score       int                  `json:"score"`
	Description string               `json:"description"`
	ProvidedBy  *registry.Provenance `json:"provided_by,omitempty"`
}

// SearchResult is registry_search's result.
type SearchResult struct {
	Results []SearchHit `json:"results"`
	Count   int         `json:"count"`
	Hint    string      `json:"hint,omitempty"`
}

// NodeBrief is a node type in registry_list.
type NodeBrief struct {
	Type        string               `json:"type"`
	Description string               `json:"description"`
	ProvidedBy  *registry.Provenance `json:"provided_by,omitempty"`
}

// ListResult is registry_list's result: node types by group.
type ListResult struct {
	Core    map[string][]NodeBrief `json:"core"`
	MCP     map[string][]NodeBrief `json:"mcp"`
	User    []NodeBrief            `json:"user"`
	Summary ListSummary            `json:"summary"`
}

// ListSummary counts registry_list's node types.
type ListSummary struct {
	Core  int `json:"core"`
	MCP   int `json:"mcp"`
	User  int `json:"user"`
	Total int `json:"total"`
}

// SettingSet is settings_set's result.
type SettingSet struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Replaced bool   `json:"replaced"`
	Message  string `json:"message"`
	Note     string `json:"note,omitempty"`
}

// SettingGot is settings_get's result.
type SettingGot struct {
	Key    string `json:"key"`
	Found  bool   `json:"found"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// TraceResult is trace_read's result.
type TraceResult struct {
	Path  string         `json:"path"`
	Trace map[string]any `json:"trace"`
}

// WorkflowMatch is one workflow_discover match.
type WorkflowMatch struct {
	Name        string            `json:"name"`
	Confidence  float64           `json:"confidence"`
	Reasons     []string          `json:"reasons"`
	Description string            `json:"description"`
	Inputs      []app.SavedInput  `json:"inputs"`
	Outputs     []app.SavedOutput `json:"outputs"`
	NodeTypes   []string          `json:"node_types"`
}

// DiscoverResult is workflow_discover's result.
type DiscoverResult struct {
	Matches        []WorkflowMatch `json:"matches"`
	TotalWorkflows int             `json:"total_workflows"`
	Recommendation string          `json:"recommendation"`
	Hint           string          `json:"hint,omitempty"`
}

// ExecuteWith is the workflow_execute call that runs a saved workflow.
type ExecuteWith struct {
	Workflow   string         `json:"workflow"`
	Parameters map[string]any `json:"parameters"`
}

// SaveResult is workflow_save's result.
type SaveResult struct {
	Name         string            `json:"name"`
	Path         string            `json:"path"`
	Description  string            `json:"description"`
	Inputs       []app.SavedInput  `json:"inputs"`
	Outputs      []app.SavedOutput `json:"outputs"`
	ExecuteWith  ExecuteWith       `json:"execute_with"`
	CLICommand   string            `json:"cli_command"`
	Message      string            `json:"message"`
	DraftDeleted string            `json:"draft_deleted,omitempty"`
	Warnings     []string          `json:"warnings,omitempty"`
}

// WorkflowListResult is workflow_list's result.
type WorkflowListResult struct {
	Workflows []*app.SavedInfo `json:"workflows"`
	Count     int              `json:"count"`
	Total     int              `json:"total"`
	Hint      string           `json:"hint,omitempty"`
}

// DescribeResult is workflow_describe's result.
type DescribeResult struct {
	Name           string              `json:"name"`
	Description    string              `json:"description"`
	Path           string              `json:"path"`
	Inputs         []app.SavedInput    `json:"inputs"`
	Outputs        []app.SavedOutput   `json:"outputs"`
	NodeTypes      []string            `json:"node_types"`
	Nodes          []app.StepBrief     `json:"nodes"`
	TemplateInputs []string            `json:"template_inputs"`
	Execution      *app.ExecutionStats `json:"execution"`
	ExecuteWith    ExecuteWith         `json:"execute_with"`
	CLICommand     string              `json:"cli_command"`
}

// ValidResult is workflow_validate's result (and workflow_execute's for a
// validation-only run).
type ValidResult struct {
	Valid    bool                `json:"valid"`
	Message  string              `json:"message"`
	Warnings []app.WarningReport `json:"warnings"`
	Inputs   []app.SavedInput    `json:"inputs,omitempty"`
}

// RunResult is workflow_execute's data on success.
type RunResult struct {
	Outputs       map[string]any      `json:"outputs"`
	Status        string              `json:"status"`
	DurationMS    *float64            `json:"duration_ms"`
	NodesExecuted *int                `json:"nodes_executed"`
	Steps         []app.StepReport    `json:"steps"`
	Workflow      app.WorkflowMeta    `json:"workflow"`
	Metrics       *app.MetricsReport  `json:"metrics"`
	Warnings      []app.WarningReport `json:"warnings,omitempty"`
	RunID         string              `json:"run_id,omitempty"`
	TemporalRunID string              `json:"temporal_run_id,omitempty"`
	ResumedFrom   string              `json:"resumed_from,omitempty"`
	// OutputsProvidedBy labels each output whose source reads a step an
	// MCP server answered (the step's own label is in steps).
	OutputsProvidedBy map[string]*registry.Provenance `json:"outputs_provided_by,omitempty"`
	// Waiting is what a run paused at an ask step asks (status waiting).
	Waiting *app.WaitingReport `json:"waiting,omitempty"`
}
