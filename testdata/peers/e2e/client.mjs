// End-to-end check of `pflow mcp serve` with the TypeScript MCP SDK client.
//
//   node client.mjs stdio <pflow-binary>      (PFLOW_HOME from the environment)
//   node client.mjs http <url> [token]
//
// Lists the 16 tools, saves a workflow, discovers it, executes it with
// parameters, reads its trace, and checks the structured errors for a
// missing input and for "../etc/passwd" as a name. Prints one JSON line per
// step and exits non-zero on the first failed expectation.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, token] = process.argv.slice(2);

const WORKFLOW = `# Greeter
Greets a person by name in a given language.

## Inputs

### name
Who to greet.
- type: string
- required: true

### greeting
The greeting word.
- type: string
- required: false
- default: hello

## Steps

### greet
Build the greeting.
- type: shell
- command: echo "\${greeting} \${name}"

## Outputs

### message
The greeting.
- source: \${greet.stdout}
`;

const EXPECTED_TOOLS = [
  "registry_describe", "registry_discover", "registry_list", "registry_run", "registry_search",
  "run_cancel", "run_status", "settings_get", "settings_set", "trace_read", "workflow_describe", "workflow_discover",
  "workflow_execute", "workflow_list", "workflow_save", "workflow_validate",
];

function fail(msg, extra) {
  console.log(JSON.stringify({ ok: false, error: msg, extra }));
  process.exit(1);
}

function check(cond, msg, extra) {
  if (!cond) fail(msg, extra);
}

function envelope(res) {
  const text = res.content?.[0]?.text;
  check(typeof text === "string", "no text block", res);
  const env = JSON.parse(text);
  check(JSON.stringify(env) === JSON.stringify(res.structuredContent), "structuredContent differs from text", res);
  check((env.success === true) === !res.isError, "isError does not match success", res);
  return env;
}

async function main() {
  let transport;
  if (mode === "stdio") {
    transport = new StdioClientTransport({ command: target, args: ["mcp", "serve"], env: process.env, stderr: "inherit" });
  } else if (mode === "http") {
    const opts = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {};
    transport = new StreamableHTTPClientTransport(new URL(target), opts);
  } else {
    fail(`unknown mode ${mode}`);
  }
  const client = new Client({ name: "pflow-e2e", version: "1.0.0" });
  await client.connect(transport);
  const step = (name, data) => console.log(JSON.stringify({ ok: true, step: name, ...data }));

  const instructions = client.getInstructions() ?? "";
  check(instructions.includes("workflow_discover"), "initialize instructions do not mention workflow_discover");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(EXPECTED_TOOLS), "tool list", names);
  for (const t of tools) {
    check(t.outputSchema && t.outputSchema.type === "object", `${t.name} has no output schema`);
  }
  step("list_tools", { count: tools.length });

  const guide = await client.readResource({ uri: "pflow://instructions" });
  check(guide.contents[0].text.length > 5000, "instructions resource too short");
  step("read_instructions", { bytes: guide.contents[0].text.length });

  let env = envelope(await client.callTool({
    name: "workflow_save",
    arguments: { workflow_file: WORKFLOW, name: "e2e-greeter", description: "Greet a person by name in a chosen language" },
  }));
  check(env.success && env.data.name === "e2e-greeter", "save", env);
  step("save", { path: env.data.path });

  env = envelope(await client.callTool({ name: "workflow_discover", arguments: { query: "greet a person by name" } }));
  check(env.success && env.data.matches.length > 0 && env.data.matches[0].name === "e2e-greeter", "discover", env);
  step("discover", { confidence: env.data.matches[0].confidence });

  env = envelope(await client.callTool({
    name: "workflow_execute",
    arguments: { workflow: "e2e-greeter", parameters: { name: "Ada", greeting: "bonjour" } },
  }));
  check(env.success && env.data.outputs.message.trim() === "bonjour Ada", "execute", env);
  check(typeof env.trace_path === "string", "execute returned no trace_path", env);
  step("execute", { output: env.data.outputs.message.trim() });

  const tracePath = env.trace_path;
  env = envelope(await client.callTool({ name: "trace_read", arguments: { trace_file: tracePath } }));
  check(env.success && env.data.path === tracePath && env.data.trace.workflow_name === "e2e-greeter", "trace_read", env);
  step("trace_read", { nodes: env.data.trace.nodes.length });

  env = envelope(await client.callTool({ name: "workflow_execute", arguments: { workflow: "e2e-greeter", parameters: {} } }));
  check(!env.success && env.error.type === "validation" && env.error.details.missing_inputs.includes("name"), "missing input", env);
  step("missing_input", { message: env.error.message });

  env = envelope(await client.callTool({ name: "workflow_execute", arguments: { workflow: "../etc/passwd" } }));
  check(!env.success && env.error.type === "security", "../etc/passwd as a name", env);
  env = envelope(await client.callTool({ name: "workflow_describe", arguments: { name: "../etc/passwd" } }));
  check(!env.success && env.error.type === "security", "../etc/passwd in workflow_describe", env);
  step("security", { message: env.error.message });

  // Every other tool once, so the SDK validates each structuredContent
  // against the tool's output schema.
  const others = [
    ["workflow_list", { filter: "greet" }, (d) => d.count === 1],
    ["workflow_describe", { name: "e2e-greeter" }, (d) => d.inputs.length === 2],
    ["workflow_validate", { workflow: WORKFLOW }, (d) => d.valid === true],
    ["registry_list", {}, (d) => d.summary.core > 0],
    ["registry_search", { pattern: "shell" }, (d) => d.results[0].type === "shell"],
    ["registry_discover", { task: "run a shell command" }, (d) => d.nodes.length > 0],
    ["registry_describe", { nodes: ["shell"] }, (d) => d.nodes[0].type === "shell"],
    ["registry_run", { node_type: "shell", parameters: { command: "echo '{\"a\": [1]}'" } }, (d) => d.paths.some((p) => p.path === "stdout.a[0]")],
    ["settings_set", { key: "E2E_API_KEY", value: "e2e-secret-value" }, (d) => d.value === "e2e***"],
    ["settings_get", { key: "E2E_API_KEY" }, (d) => d.found === true && d.value === "e2e***"],
    ["run_status", { run_id: "last" }, (d) => typeof d.status === "string" && d.run_id !== ""],
  ];
  for (const [name, args, ok] of others) {
    const res = await client.callTool({ name, arguments: args });
    env = envelope(res);
    check(env.success && ok(env.data), name, env);
    check(!JSON.stringify(res).includes("e2e-secret-value"), `${name} leaked a secret`);
  }
  step("all_tools", { count: others.length });

  await client.close();
  step("done", {});
}

main().catch((e) => fail(String(e?.stack ?? e)));
