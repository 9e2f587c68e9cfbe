// A server that speaks only MCP 2026-07-28, built with the TypeScript SDK
// v2 (@modelcontextprotocol/server): it refuses initialize (-32022) and
// answers server/discover. Its tools: echo, and confirm, which asks the
// client for input with an input_required result (multi round-trip) and
// answers with what it got.
//
//   node modern_server.mjs stdio
//   node modern_server.mjs http PORT     (serves http://127.0.0.1:PORT/mcp)
import http from 'node:http';
import { McpServer, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { appendFileSync } from 'node:fs';
import * as z from 'zod/v4';

// STARTS_FILE, when set, gets one line per start (tests count them);
// TOOLS_TTL_MS is the ttlMs of its tools/list results.
if (process.env.STARTS_FILE) appendFileSync(process.env.STARTS_FILE, 'start\n');

const VERSIONS = ['2026-07-28'];

function build() {
    const server = new McpServer({ name: 'modern', version: '1.0.0' }, {
        supportedProtocolVersions: VERSIONS,
        capabilities: { tools: { listChanged: true } },
        cacheHints: { 'tools/list': { ttlMs: Number(process.env.TOOLS_TTL_MS ?? 0) } }
    });
    server.registerTool('echo', { description: 'Echo a message', inputSchema: z.object({ message: z.string() }) }, async ({ message }) => ({
        content: [{ type: 'text', text: 'Echo: ' + message }]
    }));
    server.registerTool('confirm', { description: 'Ask before doing it', inputSchema: z.object({ what: z.string() }) }, async ({ what }, ctx) => {
        const answer = ctx.mcpReq.inputResponses?.ask;
        if (!answer) {
            return inputRequired({
                inputRequests: {
                    ask: inputRequired.elicit({
                        message: 'Really ' + what + '?',
                        requestedSchema: { type: 'object', properties: { reason: { type: 'string', description: 'why' } }, required: ['reason'] }
                    })
                }
            });
        }
        return { content: [{ type: 'text', text: 'answer: ' + JSON.stringify(answer) }] };
    });
    return server;
}

const mode = process.argv[2] ?? 'stdio';
if (mode === 'stdio') {
    serveStdio(() => build(), { legacy: 'reject' });
} else {
    const handler = createMcpHandler(() => build(), { legacy: 'reject' });
    const port = Number(process.argv[3] ?? 0);
    const srv = http.createServer(async (req, res) => {
        try {
            const chunks = [];
            for await (const c of req) chunks.push(c);
            const body = Buffer.concat(chunks);
            const headers = new Headers();
            for (const [k, v] of Object.entries(req.headers)) {
                if (Array.isArray(v)) v.forEach(x => headers.append(k, x));
                else if (v !== undefined) headers.set(k, v);
            }
            const request = new Request('http://' + req.headers.host + req.url, {
                method: req.method,
                headers,
                body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body
            });
            const response = await handler.fetch(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            if (response.body) {
                for await (const chunk of response.body) res.write(chunk);
            }
            res.end();
        } catch (e) {
            res.writeHead(500);
            res.end(String(e));
        }
    });
    srv.listen(port, '127.0.0.1', () => {
        process.stdout.write('listening ' + srv.address().port + '\n');
    });
}
