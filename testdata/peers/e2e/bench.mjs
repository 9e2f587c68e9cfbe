// Round-trip benchmark of `pflow mcp serve` over stdio from the TypeScript
// MCP SDK client (docs/decisions.md, "Measured targets": registry_list / workflow_list <= 2 ms median,
// workflow_discover over 1,000 saved workflows <= 50 ms).
//
//   node bench.mjs <pflow-binary> [iterations]
//
// PFLOW_HOME must point at a prepared home (the Go helper
// TestBenchPrepareHome / scripts write 1,000 workflows). Prints one JSON
// object per tool: {tool, n, median_ms, p90_ms, min_ms}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, iterArg] = process.argv.slice(2);
const n = Number(iterArg ?? 200);

const transport = new StdioClientTransport({ command: bin, args: ["mcp", "serve"], env: process.env, stderr: "ignore" });
const client = new Client({ name: "pflow-bench", version: "1.0.0" });
await client.connect(transport);

async function measure(tool, args) {
  for (let i = 0; i < 10; i++) await client.callTool({ name: tool, arguments: args });
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const res = await client.callTool({ name: tool, arguments: args });
    const dt = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.isError) throw new Error(`${tool}: ${res.content[0].text}`);
    times.push(dt);
  }
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  console.log(JSON.stringify({ tool, n, median_ms: +q(0.5).toFixed(3), p90_ms: +q(0.9).toFixed(3), min_ms: +times[0].toFixed(3) }));
}

await measure("registry_list", {});
await measure("workflow_list", { filter: "report" });
await measure("workflow_list", {});
await measure("workflow_discover", { query: "summarize the weekly sales report for a region" });
await client.close();
