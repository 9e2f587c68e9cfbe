// Shared helpers of the TypeScript-SDK benchmark clients: load
// @modelcontextprotocol/sdk from the npm test peers (testdata/peers, or
// $PFLOW_PEERS) and summarize timings.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const peers = process.env.PFLOW_PEERS ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "peers");
const require = createRequire(path.join(peers, "package.json"));

export const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
export const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

// stats returns the median, 90th percentile and minimum of ms timings.
export function stats(times) {
  const s = [...times].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { n: s.length, median_ms: +median.toFixed(3), p90_ms: +q(0.9).toFixed(3), min_ms: +s[0].toFixed(3) };
}
