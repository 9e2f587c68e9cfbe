// An agent framework's MCP adapter drives `pflow mcp serve`: LangChain's
// @langchain/mcp-adapters loads pflow's tools as LangChain tools (over
// stdio, or streamable HTTP) and invokes two, as an agent would.
//
//   node langchain.mjs stdio <pflow-binary>     (PFLOW_HOME from the environment)
//   node langchain.mjs http <url>
//
// Prints one JSON line per step; exits non-zero on the first failed expectation.
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

const [mode, target] = process.argv.slice(2);
const fail = (msg, extra) => { console.log(JSON.stringify({ ok: false, error: msg, extra })); process.exit(1); };
const check = (cond, msg, extra) => { if (!cond) fail(msg, extra); };
const step = (name, data) => console.log(JSON.stringify({ ok: true, step: name, ...data }));

const servers = mode === "stdio"
  ? { pflow: { transport: "stdio", command: target, args: ["mcp", "serve"], env: process.env } }
  : { pflow: { transport: "http", url: target } };
const client = new MultiServerMCPClient({ mcpServers: servers, throwOnLoadError: true, prefixToolNameWithServerName: false });
try {
  const tools = await client.getTools();
  const names = tools.map((t) => t.name).sort();
  check(names.length === 16 && names.includes("workflow_execute"), "tools", names);
  step("tools", { count: names.length });

  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const workflow = "# Hi\nSays hi.\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: echo hi from langchain\n\n## Outputs\n\n### out\nThe line.\n- source: ${s.stdout}\n";
  const out = await byName.workflow_execute.invoke({ workflow });
  const text = typeof out === "string" ? out : JSON.stringify(out);
  check(text.includes("hi from langchain"), "workflow_execute", text);
  step("workflow_execute", {});

  // A failed call (isError) reaches the agent as LangChain's ToolException
  // carrying pflow's error envelope.
  let badText = "";
  try {
    badText = JSON.stringify(await byName.workflow_execute.invoke({ workflow: "no-such-workflow" }));
  } catch (e) {
    badText = String(e?.message ?? e);
  }
  check(badText.includes('"type":"not_found"') && badText.includes("workflow_list"), "a failure reaches the agent as the error envelope", badText);
  step("failure", {});
} catch (e) {
  fail(String(e?.stack ?? e));
} finally {
  await client.close();
}
console.log(JSON.stringify({ ok: true, step: "done" }));
