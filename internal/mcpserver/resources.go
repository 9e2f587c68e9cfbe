package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/instructions"
)

// Resource URIs.
const (
	InstructionsURI        = "pflow://instructions"
	SandboxInstructionsURI = "pflow://instructions/sandbox"
)

func (s *Server) toolDefs() []*toolDef {
	var all []*toolDef
	all = append(all, s.workflowTools()...)
	all = append(all, s.registryTools()...)
	all = append(all, s.miscTools()...)
	all = append(all, s.runTools()...)
	return all
}

func (s *Server) addResources() {
	text := func(uri, body string) mcp.ResourceHandler {
		return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: body}}}, nil
		}
	}
	// The guides are about building workflows with the builder tools: a
	// server without them has no use for them.
	if s.opts.NoBuilderTools {
		s.addRecordTemplates()
		return
	}
	s.mcp.AddResource(&mcp.Resource{
		URI:   InstructionsURI,
		Name:  "Agent Instructions",
		Title: "Complete Workflow Building Guide (READ FIRST)",
		Description: "How to discover, build, test and save pflow workflows with this server's tools: the development " +
			"loop, the .pflow.md format, templates, testing nodes with registry_run, debugging with traces, and saving. " +
			"Read it before building a new workflow. You do NOT need it to run a workflow that workflow_discover found.",
		MIMEType: "text/markdown",
	}, text(InstructionsURI, instructions.Agent()))
	s.mcp.AddResource(&mcp.Resource{
		URI:   SandboxInstructionsURI,
		Name:  "Sandbox Agent Instructions",
		Title: "Workflow Building Guide for Isolated Environments",
		Description: "The same guide for agents with no shell and no shared filesystem (web assistants, containers, " +
			"multi-tenant hosts): send workflows as markdown text instead of paths, describe workflows with " +
			"workflow_describe instead of reading files, store credentials with settings_set.",
		MIMEType: "text/markdown",
	}, text(SandboxInstructionsURI, instructions.Sandbox()))
	s.addRecordTemplates()
}

// addRecordTemplates adds the templates of the library and the run
// records (listed by syncLibraryResources).
func (s *Server) addRecordTemplates() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: WorkflowURIPrefix + "{name}",
		Name:        "Saved workflow",
		Description: "A saved workflow's .pflow.md markdown, by name (workflow_list names them).",
		MIMEType:    "text/markdown",
	}, s.readLibraryResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: RunURIPrefix + "{id}",
		Name:        "Run record",
		Description: "A recorded run (the run_id of a workflow_execute result, or 'last'): status, every step with its outputs, as JSON.",
		MIMEType:    "application/json",
	}, s.readLibraryResource)
}
