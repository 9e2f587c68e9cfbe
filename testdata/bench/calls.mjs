// The TypeScript-SDK comparison client of the MCP call overhead benchmark
// (docs/decisions.md, "Measured targets"): one session to a stdio server, N calls of one tool, close —
// what a competent user of @modelcontextprotocol/sdk writes.
//
//   node calls.mjs <calls> <tool> <args-json> -- <command> [args...]
//
// Exits non-zero, naming the tool, when a call fails.
import { Client, StdioClientTransport } from "./peers.mjs";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 3 || sep === argv.length - 1) {
  console.error("usage: node calls.mjs <calls> <tool> <args-json> -- <command> [args...]");
  process.exit(2);
}
const [callsArg, tool, argsJSON] = argv.slice(0, sep);
const [command, ...args] = argv.slice(sep + 1);

const client = new Client({ name: "ts-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const callArgs = JSON.parse(argsJSON);
for (let i = 0; i < Number(callsArg); i++) {
  const res = await client.callTool({ name: tool, arguments: callArgs });
  if (res.isError) {
    console.error(`tool ${tool} failed: ${JSON.stringify(res.content)}`);
    process.exit(1);
  }
}
await client.close();
