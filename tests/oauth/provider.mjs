// An OAuth 2.1 authorization server for the OAuth tests (npm oidc-provider, installed by
// .ci/install-oidc): on 127.0.0.1:PORT, it issues JWT access tokens for the resource a client
// names (RFC 8707), with the scopes tinymcp.read and tinymcp.act; clients register themselves
// (RFC 7591) for the authorization code flow with PKCE, through the provider's development
// login and consent pages (any login, no password); two fixed clients use client_credentials.
//   node provider.mjs PREFIX PORT     (PREFIX: where .ci/install-oidc put oidc-provider)
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [prefix, portArg] = process.argv.slice(2);
const { default: Provider } = await import(
  pathToFileURL(join(prefix, "node_modules", "oidc-provider", "lib", "index.js")).href);
const port = Number(portArg);
const ttl = 300;
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const key = { ...privateKey.export({ format: "jwk" }), kid: "provider-key", use: "sig", alg: "RS256" };
const SCOPES = "tinymcp.read tinymcp.act";

const machine = (id, scope) => ({
  client_id: id, client_secret: `${id}-secret`, grant_types: ["client_credentials"],
  redirect_uris: [], response_types: [], scope,
});

const provider = new Provider(issuer, {
  jwks: { keys: [key] },
  clients: [machine("reader", "tinymcp.read"), machine("actor", SCOPES)],
  scopes: ["openid", "offline_access", "tinymcp.read", "tinymcp.act"],
  cookies: { keys: ["tests-only-cookie-key"] },
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: SCOPES,
        audience: resourceIndicator,
        accessTokenTTL: ttl,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
});
// A client registering itself (RFC 7591) names the scope of its first authorization
// (tinymcp.read, from the bridge's 401); oidc-provider would then allow that client no other
// scope ever, so the MCP step-up to tinymcp.act (a 403 insufficient_scope) could not happen.
// This server registers clients without a scope of their own: each grant says what they get.
provider.use(async (ctx, next) => {
  if (ctx.method === "POST" && ctx.path === "/reg") {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString() || "{}");
    delete body.scope;
    ctx.request.body = body;
  }
  await next();
});
provider.on("server_error", (ctx, err) => console.error("server_error", err));
provider.listen(port, "127.0.0.1", () => console.log(`oidc-provider ready at ${issuer}`));
