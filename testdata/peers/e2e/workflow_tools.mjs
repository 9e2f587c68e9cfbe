// Saved workflows as tools (`pflow mcp serve --workflow-tools`) with the
// TypeScript MCP SDK client:
//
//   node workflow_tools.mjs <pflow-binary> <serve args...>   (PFLOW_HOME from the environment)
//
// The library holds GREETER_NAME ("greeter") (inputs name, greeting=hello; output message)
// and a workflow file FAREWELL_FILE to save as FAREWELL_NAME during the session. Lists the
// tools (greeter with its input and output schemas), calls greeter (its
// outputs come back as structuredContent, which the SDK checks against the
// output schema), reads it as a resource, then saves the farewell workflow
// with the pflow CLI and waits for notifications/tools/list_changed and the
// new tool. Prints one JSON line per step; exits non-zero on the first
// failed expectation.
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, ...serveArgs] = process.argv.slice(2);
const GREETER = process.env.GREETER_NAME ?? "greeter";
const FAREWELL = process.env.FAREWELL_NAME ?? "farewell";

function fail(msg, extra) {
  console.log(JSON.stringify({ ok: false, error: msg, extra }));
  process.exit(1);
}
function check(cond, msg, extra) {
  if (!cond) fail(msg, extra);
}
const step = (name, data) => console.log(JSON.stringify({ ok: true, step: name, ...data }));

async function main() {
  const transport = new StdioClientTransport({ command: bin, args: serveArgs, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "pflow-workflow-tools", version: "1.0.0" });
  let changed;
  const listChanged = new Promise((resolve) => { changed = resolve; });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
  await client.connect(transport);

  let { tools } = await client.listTools();
  const greeter = tools.find((t) => t.name === GREETER);
  check(greeter, "no greeter tool", tools.map((t) => t.name));
  const ins = greeter.inputSchema;
  check(ins.type === "object" && ins.properties.name.type === "string" && ins.properties.name.description === "Who to greet.", "greeter input schema", ins);
  check(JSON.stringify(ins.required) === JSON.stringify(["name"]) && ins.properties.greeting.default === "hello", "greeter required/default", ins);
  check(greeter.outputSchema && greeter.outputSchema.properties.message, "greeter output schema", greeter.outputSchema);
  check(greeter.description.startsWith("Greets a person"), "greeter description", greeter.description);
  step("list_tools", { count: tools.length, names: tools.map((t) => t.name).sort() });

  const res = await client.callTool({ name: GREETER, arguments: { name: "Ada" } });
  check(!res.isError, "greeter failed", res);
  check(res.structuredContent && res.structuredContent.message.trim() === "hello Ada", "greeter structuredContent", res);
  check(JSON.parse(res.content[0].text).message.trim() === "hello Ada", "greeter text", res);
  check(typeof res._meta?.["pflow/run_id"] === "string", "greeter run id", res);
  step("call", { message: res.structuredContent.message.trim() });

  const bad = await client.callTool({ name: GREETER, arguments: {} });
  check(bad.isError && bad.structuredContent.error.type === "validation", "missing input", bad);
  step("missing_input", { message: bad.structuredContent.error.message });

  const { resources } = await client.listResources();
  check(resources.some((r) => r.uri === `pflow://workflows/${GREETER}`), "greeter resource", resources);
  const md = await client.readResource({ uri: `pflow://workflows/${GREETER}` });
  check(md.contents[0].text.startsWith("# Greeter"), "greeter markdown", md);
  step("resource", { bytes: md.contents[0].text.length });

  // Save another workflow from the CLI: the client is told and sees it.
  execFileSync(bin, ["workflow", "save", process.env.FAREWELL_FILE, "--name", FAREWELL], { env: process.env });
  const timer = setTimeout(() => fail("no notifications/tools/list_changed within 60s"), 60000);
  await listChanged;
  clearTimeout(timer);
  ({ tools } = await client.listTools());
  check(tools.some((t) => t.name === FAREWELL), "farewell not listed after list_changed", tools.map((t) => t.name));
  const bye = await client.callTool({ name: FAREWELL, arguments: { name: "Ada" } });
  check(!bye.isError && bye.structuredContent.text.trim() === "bye Ada", "farewell", bye);
  step("list_changed", { count: tools.length });
  await client.close();
  console.log(JSON.stringify({ ok: true, step: "done" }));
}

main().catch((e) => fail(String(e?.stack ?? e)));
