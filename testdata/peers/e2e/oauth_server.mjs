// An OAuth-protected MCP server built from the TypeScript SDK's own parts
// (mcpAuthRouter, requireBearerAuth, McpServer, streamable HTTP) and its demo
// in-memory OAuth provider, extended with what the demo lacks for pflow's
// sign-in test: refresh tokens, and a test hook that expires every access
// token at once (the server then refuses tokens the client still thinks
// valid).
//
//   node oauth_server.mjs <port>
//
// Serves the authorization server and the MCP endpoint (/mcp) on
// http://localhost:<port>; POST /test/expire expires all access tokens;
// GET /test/refreshes says how many refreshes were granted.
import { randomUUID } from "node:crypto";
import express from "express";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { DemoInMemoryAuthProvider } from "../node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/demoInMemoryOAuthProvider.js";

const port = Number(process.argv[2]);
const base = new URL(`http://localhost:${port}`);
const mcpUrl = new URL("/mcp", base);

class RefreshingProvider extends DemoInMemoryAuthProvider {
  constructor() {
    super();
    this.refreshTokens = new Map();
    this.refreshes = 0;
  }
  async exchangeAuthorizationCode(client, code, verifier, redirectUri, resource) {
    const t = await super.exchangeAuthorizationCode(client, code, verifier, redirectUri, resource);
    const rt = randomUUID();
    this.refreshTokens.set(rt, { clientId: client.client_id, scopes: t.scope ? t.scope.split(" ") : [], resource });
    return { ...t, refresh_token: rt };
  }
  async exchangeRefreshToken(client, refreshToken, _scopes, resource) {
    const d = this.refreshTokens.get(refreshToken);
    if (!d || d.clientId !== client.client_id) throw new Error("invalid refresh token");
    this.refreshes++;
    const token = randomUUID();
    this.tokens.set(token, { token, clientId: client.client_id, scopes: d.scopes, expiresAt: Date.now() + 3600000, resource: resource ?? d.resource, type: "access" });
    return { access_token: token, token_type: "bearer", expires_in: 3600, refresh_token: refreshToken, scope: d.scopes.join(" ") };
  }
  // An unknown or expired token is a 401 (the demo's plain Error is a 500).
  async verifyAccessToken(token) {
    try {
      return await super.verifyAccessToken(token);
    } catch (e) {
      throw new InvalidTokenError(String(e?.message ?? e));
    }
  }
  expireAll() {
    for (const t of this.tokens.values()) t.expiresAt = 0;
  }
}

const provider = new RefreshingProvider();
const app = express();
app.use(express.json());
app.use(mcpAuthRouter({ provider, issuerUrl: base, resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"], resourceName: "pflow test server" }));
app.post("/test/expire", (req, res) => { provider.expireAll(); res.json({ expired: true }); });
app.get("/test/refreshes", (req, res) => res.json({ refreshes: provider.refreshes }));

const auth = requireBearerAuth({ verifier: provider, requiredScopes: [], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
app.all("/mcp", auth, async (req, res) => {
  const server = new McpServer({ name: "protected", version: "1.0.0" });
  server.registerTool("greet", { description: "Greets someone", inputSchema: { name: z.string() } },
    async ({ name }) => ({ content: [{ type: "text", text: `Hello, ${name}!` }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});

app.listen(port, "127.0.0.1", () => console.log(`listening on port ${port}`));
