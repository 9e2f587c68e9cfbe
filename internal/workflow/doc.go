// Package workflow holds pflow's workflow model (the IR) and its two source
// formats: the .pflow.md markdown format (the authoring format) and JSON IR.
//
// Values inside Params, Default and Batch.Items follow the canonical value
// model of package value (nil, bool, int64, float64, string, []any,
// map[string]any).
//
// The rest of this comment is the parsing side: the .pflow.md format, JSON
// IR and the structural check.
//
// # Entry points
//
//   - ParseMarkdown(src, path): a .pflow.md document → *Workflow, or a
//     *ParseError ("Line N: message", blank line, suggestion).
//   - ParseJSON(src, path): a JSON IR object → *Workflow. Only text that is not
//     a JSON object fails here; schema problems are kept for CheckStructure.
//   - ParseFile(path): by extension — ".pflow.md" (any case) is markdown,
//     ".json" is JSON IR, any other ".md" is refused with "Rename to: X.pflow.md".
//   - FormatMarkdown(w): IR → .pflow.md text that parses back to the same IR
//     (refuses, saying why, what markdown cannot express).
//   - (*Workflow).LineOf(path): the heading line a StructureError path points into.
//   - (*Workflow).CheckStructure(): every IR-schema and structural problem
//     (unknown properties, wrong types, enums, patterns, batch limits, edge
//     endpoints, start_node, mapping targets, duplicate node ids), each with
//     an IR path ("nodes[0].type") and a suggestion.
//
// Every parsed workflow is normalized (ir_version, non-nil edges) and has a
// Source (absolute path, title, description, frontmatter metadata, raw text,
// warnings). Inputs, outputs and nodes from markdown carry the 1-based line of
// their "###" heading.
//
// # The .pflow.md format
//
// The format is the Python pflow's: optional YAML
// frontmatter, "# Title" and description prose, then "## Inputs", "## Steps"
// (required) and "## Outputs" sections whose "### id" headings are entities.
// Each entity needs at least one line of prose (its description / purpose),
// takes "- key: value" YAML items (continuation lines indented two or more
// spaces past the dash belong to the item, so nested mappings, lists and
// "|" block scalars work — including lines that start with "#"), and fenced
// code blocks whose info string's last word names the parameter they fill.
// A "yaml" first word (```yaml batch, ```yaml headers) parses the block as
// YAML in Steps; any other prefix (```json body, ```shell command) keeps
// the text raw. Blocks in Inputs and Outputs are always raw.
//
// As in the Python pflow, a blank line ends a YAML item; when the next line is
// indented like a continuation (a "|" scalar with a blank line in it), the
// parser adds a warning to Source.Warnings because that text falls into the
// description. YAML follows YAML 1.2 (go.yaml.in/yaml/v3): "yes"/"no"/"on"
// are strings, dates stay strings as written, integers are int64.
//
// Block structure (headings, fenced blocks including ```` outer fences and
// ~~~ fences, list items) comes from goldmark, a CommonMark parser, so what
// GitHub renders is what runs: only top-level headings count (a "# comment"
// inside an indented list-item continuation is not a heading), HTML comments
// and thematic breaks are ignored. Setext headings ("Text" underlined with
// --- or ===) are read as text, as the Python pflow does, with a warning. An
// unclosed
// fence, which CommonMark runs to the end of the file, is an error.
//
// # Step-level keys (additions to the Python pflow's format)
//
// Like "type" and "batch", these YAML keys are taken out of a step's params
// (so a node param cannot have one of these names):
//
//   - next: <step-id>                    default successor of this step
//   - on_error: <step-id>                on action "error" go to <step-id>
//   - on: {<action>: <step-id>, ...}     one edge per action; "default" = next
//   - input_mappings: {<param>: <shared.path>}
//   - output_mappings: {<output_key>: <root_key>}
//
// on_error: X is sugar for on: {error: X}; giving both with different
// targets, or next together with a different on.default, is an error.
//
// Edges. Steps form a chain in document order, so a plain file reads as a
// linear pipeline. A step that is the target of a non-default action edge
// from an earlier step is a "branch step" (e.g. a recovery step) and is
// skipped by the chain: the step before it links to the next non-branch step
// after it. An action edge back to an earlier step or to the step itself is a
// loop and does not take its target out of the chain (otherwise
// "- on: {retry: fetch}" on a later step would cut fetch off from the rest). A branch step's
// own default successor is only what its "- next:" says; without one the
// flow ends after it. "- next:" on any step replaces its chain link. Edges
// are emitted per step in document order: the default edge first, then the
// action edges sorted by action name. Example:
//
//	### fetch
//	Fetch the feed.
//	- type: http
//	- url: https://example.com/feed
//	- on_error: fallback
//
//	### fallback
//	Use the cached copy when the fetch fails.
//	- type: read-file
//	- file_path: cache/feed.json
//	- next: summarize
//
//	### summarize
//	Summarize the feed.
//	- type: llm
//
// gives edges fetch→summarize, fetch→fallback (action "error") and
// fallback→summarize. A target that is not a step id is a ParseError at the
// line of the key, listing the step ids.
//
// Mappings. input_mappings and output_mappings of a step become
// Workflow.Mappings[<step-id>] (see Mapping): input_mappings fills a node
// param from a shared-store path, output_mappings also publishes a node
// output under a root key.
//
// # JSON IR
//
// A JSON workflow is the plain IR object (as in the Python pflow) with
// additionalProperties false everywhere; besides nodes, edges, inputs and
// outputs it may use start_node, mappings, enable_namespacing,
// template_resolution_mode and edges with an "action". Numbers decode as
// int64 when integral, else float64; inputs and outputs keep document order.
package workflow
