// `pflow mcp serve` with the TypeScript SDK v2 client (@modelcontextprotocol/client)
// pinned to MCP 2026-07-28 (server/discover, per-request _meta, no session).
//
//   node modern_client.mjs stdio <pflow-binary>   (PFLOW_HOME from the environment)
//   node modern_client.mjs http <url> [token]     (a server started with --workflow-tools)
//
// Checks the negotiated revision, lists the tools, runs a workflow with
// progress, then saves a workflow and waits for the tool list change that
// subscriptions/listen delivers (the server publishes saved workflows as
// tools). Prints one JSON line per step; exits non-zero on the first failed
// expectation.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, target, token] = process.argv.slice(2);

const WORKFLOW = `# Hello
Says hello.

## Steps

### say
Say it.
- type: shell
- command: echo hello

## Outputs

### message
The greeting.
- source: \${say.stdout}
`;

function fail(msg, extra) {
    console.log(JSON.stringify({ ok: false, error: msg, extra }));
    process.exit(1);
}

function check(cond, msg, extra) {
    if (!cond) fail(msg, extra);
}

let changed;
const listChanged = new Promise(resolve => (changed = resolve));

async function main() {
    let transport;
    if (mode === 'stdio') {
        transport = new StdioClientTransport({ command: target, args: ['mcp', 'serve', '--workflow-tools'], env: process.env, stderr: 'inherit' });
    } else if (mode === 'http') {
        const opts = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {};
        transport = new StreamableHTTPClientTransport(new URL(target), opts);
    } else {
        fail(`unknown mode ${mode}`);
    }
    const client = new Client(
        { name: 'pflow-e2e-2026', version: '1.0.0' },
        {
            versionNegotiation: { mode: { pin: '2026-07-28' } },
            listChanged: { tools: { onChanged: (err, tools) => { if (!err) changed(tools); } } }
        }
    );
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion();
    check(version === '2026-07-28', 'negotiated ' + version);
    console.log(JSON.stringify({ ok: true, step: 'connect', version }));

    const { tools } = await client.listTools();
    check(tools.some(t => t.name === 'workflow_execute'), 'no workflow_execute', tools.map(t => t.name));
    console.log(JSON.stringify({ ok: true, step: 'list', tools: tools.length }));

    const progress = [];
    const res = await client.callTool(
        { name: 'workflow_execute', arguments: { workflow: WORKFLOW } },
        { onprogress: p => progress.push(p) }
    );
    const env = JSON.parse(res.content[0].text);
    check(env.success === true, 'workflow_execute failed', env);
    check(String(env.data.outputs.message).trim() === 'hello', 'wrong output', env.data);
    check(progress.length > 0, 'no progress notification');
    console.log(JSON.stringify({ ok: true, step: 'execute', progress: progress.length }));

    {
        // The server (started with --workflow-tools) publishes saved
        // workflows as tools: saving one changes the list, which reaches
        // this client through subscriptions/listen.
        const saved = await client.callTool({ name: 'workflow_save', arguments: { workflow_file: WORKFLOW, name: 'hello-e2e', description: 'Says hello in a test' } });
        check(!saved.isError, 'workflow_save failed', saved.content);
        const after = await listChanged;
        check(after.some(t => t.name === 'hello-e2e'), 'the new tool is not listed', after.map(t => t.name));
        console.log(JSON.stringify({ ok: true, step: 'list_changed' }));
    }
    await client.close();
    console.log(JSON.stringify({ ok: true, step: 'done' }));
    process.exit(0);
}

main().catch(e => fail(String(e?.stack ?? e)));
