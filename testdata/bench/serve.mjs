// MCP server round trips from the TypeScript SDK client over stdio
// (docs/decisions.md, "Measured targets": registry_list / workflow_list ≤ 2 ms median,
// workflow_discover over 1,000 saved workflows ≤ 50 ms), side by side with
// the floor of an MCP round trip: `ping` to the same pflow process and
// `echo` on server-everything (the TS SDK's own reference server).
//
//   node serve.mjs <pflow> <small-home> <large-home> <rounds> -- <everything command> [args...]
//
// <small-home> holds 10 saved workflows, <large-home> 1,000. Every round
// makes one request of each kind, in rotating order, so the contenders share
// the machine's load. Prints one JSON object: {label: {n, median_ms, p90_ms, min_ms}}.
import { Client, StdioClientTransport, stats } from "./peers.mjs";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep !== 4 || sep === argv.length - 1) {
  console.error("usage: node serve.mjs <pflow> <small-home> <large-home> <rounds> -- <everything command> [args...]");
  process.exit(2);
}
const [pflow, smallHome, largeHome, roundsArg] = argv.slice(0, 4);
const [evCommand, ...evArgs] = argv.slice(sep + 1);
const rounds = Number(roundsArg);

async function connect(command, args, env) {
  const client = new Client({ name: "ts-bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: "ignore" }));
  return client;
}

const small = await connect(pflow, ["mcp", "serve"], { PFLOW_HOME: smallHome });
const large = await connect(pflow, ["mcp", "serve"], { PFLOW_HOME: largeHome });
const everything = await connect(evCommand, evArgs, {});

async function tool(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.content)}`);
}

const cases = [
  ["ping (pflow mcp serve)", () => small.ping()],
  ["echo (server-everything)", () => tool(everything, "echo", { message: "hi" })],
  ["registry_list", () => tool(small, "registry_list", {})],
  ["workflow_list (10 workflows)", () => tool(small, "workflow_list", {})],
  ["workflow_list filter (1,000 workflows)", () => tool(large, "workflow_list", { filter: "invoice" })],
  ["workflow_discover (1,000 workflows)", () => tool(large, "workflow_discover", { query: "summarize the weekly sales report for a region" })],
];

// Warm-up: first calls build caches (discovery index, registry snapshot).
for (let i = 0; i < 5; i++) for (const [, f] of cases) await f();

const times = Object.fromEntries(cases.map(([label]) => [label, []]));
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < cases.length; k++) {
    const [label, f] = cases[(r + k) % cases.length];
    const t0 = process.hrtime.bigint();
    await f();
    times[label].push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
await Promise.all([small.close(), large.close(), everything.close()]);
console.log(JSON.stringify(Object.fromEntries(Object.entries(times).map(([k, v]) => [k, stats(v)]))));
