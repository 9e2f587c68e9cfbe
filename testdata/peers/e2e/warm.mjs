// Warm MCP sessions through `pflow mcp serve` vs the same calls made
// directly (the warm-hub target of docs/BENCHMARKS.md), side by side in one run:
//
//   node warm.mjs <pflow-binary> <workflow-file> <server-entry.js> [rounds] [relay-binary]
//
// direct: the TypeScript SDK client opens a session to
// server-everything (node <server-entry.js> stdio) and times rounds of 3
// sequential echo calls. pflow: the same client opens `pflow mcp serve`
// (PFLOW_HOME prepared with that server synced) and times workflow_execute
// of <workflow-file>, a workflow of the same 3 echo calls, from the second
// call on. Each round also times an MCP ping to pflow, and reads the steps'
// durations from the result (the 3 calls as pflow makes them): the floor of
// any workflow_execute is one round trip to pflow plus its calls. Prints
// {direct_median_ms, pflow_median_ms, ratio, first_call_ms, ping_median_ms,
// steps_median_ms, floor_ratio}. With a relay binary (internal/bench/cmd/relay:
// a go-sdk server whose one tool makes the same 3 calls on a kept session),
// it also times that tool, the least any server relaying the calls costs
// (relay_median_ms, relay_ratio).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, workflow, entry, roundsArg, relayBin] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 30);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function connect(command, args) {
  const client = new Client({ name: "pflow-warm-bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" }));
  return client;
}

const direct = await connect(process.execPath, [entry, "stdio"]);
const threeCalls = async () => {
  for (const m of ["one", "two", "three"]) {
    const r = await direct.callTool({ name: "echo", arguments: { message: m } });
    if (r.isError) throw new Error(JSON.stringify(r));
  }
};
for (let i = 0; i < 3; i++) await threeCalls();
const directTimes = [];
for (let i = 0; i < rounds; i++) {
  const t0 = process.hrtime.bigint();
  await threeCalls();
  directTimes.push(ms(t0));
}
await direct.close();

let relayTimes = [];
if (relayBin) {
  const relay = await connect(relayBin, ["--", process.execPath, entry, "stdio"]);
  const viaRelay = async () => {
    const r = await relay.callTool({ name: "three", arguments: {} });
    if (r.isError) throw new Error(JSON.stringify(r));
  };
  for (let i = 0; i < 3; i++) await viaRelay();
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    await viaRelay();
    relayTimes.push(ms(t0));
  }
  await relay.close();
}

const pflow = await connect(bin, ["mcp", "serve"]);
const execute = async () => {
  const r = await pflow.callTool({ name: "workflow_execute", arguments: { workflow, parameters: {} } });
  if (r.isError) throw new Error(r.content[0].text);
  return r.structuredContent.data.steps.reduce((sum, s) => sum + s.duration_ms, 0);
};
let t0 = process.hrtime.bigint();
await execute(); // starts the server
const first = ms(t0);
for (let i = 0; i < 2; i++) await execute();
const pflowTimes = [], stepTimes = [], pingTimes = [];
for (let i = 0; i < rounds; i++) {
  t0 = process.hrtime.bigint();
  stepTimes.push(await execute());
  pflowTimes.push(ms(t0));
  t0 = process.hrtime.bigint();
  await pflow.ping();
  pingTimes.push(ms(t0));
}
await pflow.close();

const d = median(directTimes), p = median(pflowTimes), pg = median(pingTimes), st = median(stepTimes);
const r3 = (x) => +x.toFixed(3);
console.log(JSON.stringify({
  rounds, direct_median_ms: r3(d), pflow_median_ms: r3(p), ratio: +(p / d).toFixed(2), first_call_ms: +first.toFixed(1),
  ping_median_ms: r3(pg), steps_median_ms: r3(st), floor_ratio: +((pg + st) / d).toFixed(2),
  ...(relayBin ? { relay_median_ms: r3(median(relayTimes)), relay_ratio: +(median(relayTimes) / d).toFixed(2) } : {}),
}));
