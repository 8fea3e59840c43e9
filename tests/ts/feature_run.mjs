// Every feature a server has, through the official TypeScript SDK client (v1:
// @modelcontextprotocol/sdk, v2: @modelcontextprotocol/client), printed as one JSON report:
//   node feature_run.mjs --sdk v1|v2 --sdk-dir DIR [--pin VERSION] (--http URL | -- COMMAND ARGS...)
// DIR holds the SDK's node_modules (.ci/install-node's prefix). A feature the server does not
// offer is reported absent; each other one passes or fails with what went wrong.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const sdk = option("--sdk");
const pin = option("--pin");
const url = option("--http");
const command = argv.includes("--") ? argv.slice(argv.indexOf("--") + 1) : [];
const modules = path.join(path.resolve(option("--sdk-dir")), "node_modules");
const require = createRequire(path.join(modules, "x.js"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const versionOf = (name) => JSON.parse(readFileSync(path.join(modules, name, "package.json"))).version;

const MODERN = "2026-07-28";     // no ping, resources/subscribe or logging/setLevel there
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";   // 2026-07-28: a request's own log level
const UPDATE_WAIT_MS = 15000;   // a watched resource changes within 5 s, the sim temperature sooner
const QUIET_MS = 600;           // how long nothing may follow a cancellation

async function loadSdk() {
  // -> { Client, Stdio, Http, on(client, method, handler), notify(client, method, handler),
  //      call(client, params, options), version }
  if (sdk === "v1") {
    const base = "@modelcontextprotocol/sdk/";
    const { Client } = await load(base + "client/index.js");
    const { StdioClientTransport } = await load(base + "client/stdio.js");
    const { StreamableHTTPClientTransport } = await load(base + "client/streamableHttp.js");
    const types = await load(base + "types.js");
    const schemas = {
      "elicitation/create": types.ElicitRequestSchema,
      "sampling/createMessage": types.CreateMessageRequestSchema,
      "notifications/message": types.LoggingMessageNotificationSchema,
      "notifications/resources/updated": types.ResourceUpdatedNotificationSchema,
    };
    return {
      Client, Stdio: StdioClientTransport, Http: StreamableHTTPClientTransport,
      on: (client, method, handler) => client.setRequestHandler(schemas[method], handler),
      notify: (client, method, handler) => client.setNotificationHandler(schemas[method], handler),
      call: (client, params, options) => client.callTool(params, undefined, options),
      version: versionOf("@modelcontextprotocol/sdk"),
    };
  }
  const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
  const { StdioClientTransport } = await load("@modelcontextprotocol/client/stdio");
  return {
    Client, Stdio: StdioClientTransport, Http: StreamableHTTPClientTransport,
    on: (client, method, handler) => client.setRequestHandler(method, handler),
    notify: (client, method, handler) => client.setNotificationHandler(method, handler),
    call: (client, params, options) => client.callTool(params, options),
    version: versionOf("@modelcontextprotocol/client"),
  };
}

// -- a small JSON Schema check for structuredContent (what the boards' outputSchemas use) -----
function mismatch(schema, value, where = "structuredContent") {
  if (!schema || typeof schema !== "object") return null;
  const kinds = { object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
                  array: Array.isArray, string: (v) => typeof v === "string",
                  boolean: (v) => typeof v === "boolean", number: (v) => typeof v === "number",
                  integer: Number.isInteger, null: (v) => v === null };
  const types = [].concat(schema.type ?? []);
  if (types.length && !types.some((t) => kinds[t]?.(value))) return `${where}: not ${types}`;
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    return `${where}: not the constant ${JSON.stringify(schema.const)}`;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    return `${where}: ${JSON.stringify(value)} not in its enum`;
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) return `${where} < minimum`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${where} > maximum`;
  }
  if (kinds.object(value)) {
    for (const key of schema.required ?? []) {
      if (!(key in value)) return `${where}.${key}: missing`;
    }
    for (const [key, item] of Object.entries(value)) {
      const sub = schema.properties?.[key];
      if (sub) {
        const wrong = mismatch(sub, item, `${where}.${key}`);
        if (wrong) return wrong;
      } else if (schema.additionalProperties === false) {
        return `${where}.${key}: not in the schema`;
      }
    }
  }
  if (Array.isArray(value) && schema.items) {
    for (const [i, item] of value.entries()) {
      const wrong = mismatch(schema.items, item, `${where}[${i}]`);
      if (wrong) return wrong;
    }
  }
  return null;
}

function sampleArguments(schema) {
  // Arguments for a tool from its schema: each required one from its enum, minimum or type;
  // null when one cannot be made up (a free string). An optional wait at its shortest: with
  // none, wait_for_event waits its whole default (25 s) for an event no one makes.
  const wait = schema?.properties?.timeout_s;
  const args = wait ? { timeout_s: wait.minimum ?? 0 } : {};
  for (const key of schema?.required ?? []) {
    const prop = schema.properties?.[key] ?? {};
    if (prop.enum) args[key] = prop.enum[0];
    else if (prop.type === "integer" || prop.type === "number") args[key] = prop.minimum ?? 1;
    else if (prop.type === "boolean") args[key] = true;
    else return null;
  }
  return args;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const check = (ok, why) => { if (!ok) throw new Error(why); };
const text = (result) => (result.content ?? []).map((c) => c.text ?? "").join(" ");

async function waitFor(predicate, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return;
    await sleep(50);
  }
  throw new Error(`no ${what} within ${ms} ms`);
}

async function main() {
  const lib = await loadSdk();
  const report = { sdk, sdkVersion: lib.version, features: {} };
  const logs = [];
  const updates = [];
  const answered = { elicitation: 0, sampling: 0 };
  const options = { capabilities: { elicitation: { form: {} }, sampling: {} } };
  if (pin) options.versionNegotiation = { mode: { pin } };
  const client = new lib.Client({ name: "tinymcp-ts-feature-run", version: "1.0.0" }, options);
  lib.on(client, "elicitation/create", async (request) => {
    answered.elicitation += 1;
    check(request.params.requestedSchema, "an elicitation without a requestedSchema");
    return { action: "accept", content: { username: "ada", email: "ada@example.com" } };
  });
  lib.on(client, "sampling/createMessage", async (request) => {
    answered.sampling += 1;
    check(request.params.messages?.length, "a sampling request without messages");
    return { model: "feature-run", role: "assistant",
             content: { type: "text", text: "sampled-answer-42" } };
  });
  lib.notify(client, "notifications/message", (n) => { logs.push(n.params); });
  lib.notify(client, "notifications/resources/updated", (n) => { updates.push(n.params.uri); });

  const transport = url ? new lib.Http(new URL(url))
    : new lib.Stdio({ command: command[0], args: command.slice(1), env: process.env,
                      cwd: process.cwd(), stderr: "inherit" });
  const feature = async (name, present, body) => {
    if (!present) {
      report.features[name] = { ok: null, detail: "absent: not offered (by the server, or in this revision)" };
      return;
    }
    try {
      report.features[name] = { ok: true, detail: (await body()) ?? "" };
    } catch (e) {
      report.features[name] = { ok: false, detail: String(e?.stack ?? e).slice(0, 800) };
    }
  };

  await feature("initialize", true, async () => {
    await client.connect(transport);
    const info = client.getServerVersion();
    check(info?.name, "no serverInfo.name");
    report.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion
      ?? null;
    return `${info.name} ${info.version}`;
  });
  if (!report.features.initialize.ok) {
    console.log(JSON.stringify(report));
    process.exit(0);
  }
  const caps = client.getServerCapabilities() ?? {};
  report.capabilities = caps;
  const tools = caps.tools ? (await client.listTools()).tools : [];
  const named = (pattern) => tools.find((t) => pattern.test(t.name));
  const modern = report.protocolVersion === MODERN;

  await feature("ping", !modern, async () => { await client.ping(); });
  await feature("discover", modern, async () => {
    const found = await client.discover();
    check(found.supportedVersions?.includes(MODERN) ?? found.serverInfo,
          `server/discover: ${JSON.stringify(found)}`);
    return JSON.stringify(found.supportedVersions ?? []);
  });

  await feature("tools", caps.tools, async () => {
    check(tools.length > 0, "tools/list is empty");
    const called = [];
    for (const tool of tools) {
      // Read-only tools only: one that acts may refuse made-up arguments (set_alert).
      const args = tool.outputSchema && tool.annotations?.readOnlyHint
        ? sampleArguments(tool.inputSchema) : null;
      if (!args) continue;
      const result = await lib.call(client, { name: tool.name, arguments: args });
      check(!result.isError, `${tool.name}: isError ${text(result)}`);
      check(result.structuredContent, `${tool.name}: no structuredContent`);
      const wrong = mismatch(tool.outputSchema, result.structuredContent);
      check(!wrong, `${tool.name}: ${wrong}`);
      called.push(tool.name);
    }
    const plain = named(/^test_simple_text$/);
    if (plain) {
      const result = await lib.call(client, { name: plain.name, arguments: {} });
      check(!result.isError && text(result), `${plain.name}: ${JSON.stringify(result)}`);
      called.push(plain.name);
    }
    check(called.length > 0, "no tool could be called");
    return `${tools.length} listed; called ${called.join(", ")}`;
  });

  const resources = caps.resources ? (await client.listResources()).resources : [];
  await feature("resources", caps.resources, async () => {
    check(resources.length > 0, "resources/list is empty");
    for (const resource of resources) {
      const read = await client.readResource({ uri: resource.uri });
      check(read.contents?.length, `${resource.uri}: no contents`);
      check(read.contents[0].uri === resource.uri, `${resource.uri}: read back as ${read.contents[0].uri}`);
    }
    return `${resources.length} read`;
  });

  await feature("templates", caps.resources, async () => {
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    check(Array.isArray(templates), "no resourceTemplates array");
    for (const template of templates) {
      const uri = template.uriTemplate.replace(/\{[^}]+\}/g, "7");
      const read = await client.readResource({ uri });
      check(read.contents?.length, `${uri}: no contents`);
    }
    return `${templates.length} templates, each read`;
  });

  const watched = resources.find((r) => /watched/.test(r.uri))
    ?? resources.find((r) => r.uri.endsWith("sensor://temperature"));   // LABEL+ behind a bridge
  await feature("subscribe", caps.resources?.subscribe && watched, async () => {
    // 2026-07-28: a subscriptions/listen stream instead of resources/subscribe.
    const stream = modern ? await client.listen({ resourceSubscriptions: [watched.uri] })
      : await client.subscribeResource({ uri: watched.uri });
    await waitFor(() => updates.includes(watched.uri), UPDATE_WAIT_MS,
                  `notifications/resources/updated for ${watched.uri}`);
    await (modern ? stream.close() : client.unsubscribeResource({ uri: watched.uri }));
    return (modern ? "subscriptions/listen " : "resources/subscribe ") + watched.uri;
  });

  const prompts = caps.prompts ? (await client.listPrompts()).prompts : [];
  // A bridge of several boards declares prompts whether or not a board has one: none is absent.
  await feature("prompts", prompts.length > 0, async () => {
    for (const prompt of prompts) {
      const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, "test://x"]));
      const got = await client.getPrompt({ name: prompt.name, arguments: args });
      check(got.messages?.length, `${prompt.name}: no messages`);
    }
    return `${prompts.length} got`;
  });

  const argued = prompts.find((p) => p.arguments?.length);
  await feature("completion", caps.completions && argued, async () => {
    const done = await client.complete({ ref: { type: "ref/prompt", name: argued.name },
                                         argument: { name: argued.arguments[0].name, value: "" } });
    check(done.completion?.values?.length > 0, `no completion values: ${JSON.stringify(done)}`);
    return done.completion.values.join(", ");
  });

  const logger = named(/logging|shout/);
  await feature("logging", caps.logging, async () => {
    if (!modern) await client.setLoggingLevel("debug");
    if (!logger) return modern ? "no tool logs" : "setLevel only: no tool logs";
    const before = logs.length;
    await lib.call(client, { name: logger.name, arguments: {},
                             ...(modern ? { _meta: { [LOG_LEVEL]: "debug" } } : {}) });
    await waitFor(() => logs.length > before, 5000, "notifications/message");
    return `${logs.length - before} messages from ${logger.name}`;
  });

  const slow = named(/progress/);
  await feature("progress", slow, async () => {
    const seen = [];
    await lib.call(client, { name: slow.name, arguments: {} },
                   { onprogress: (p) => seen.push(p.progress) });
    await sleep(100);   // the SDKs may hand the last notification on after the result
    check(seen.length > 0, "no notifications/progress");
    check(seen.every((p, i) => i === 0 || p > seen[i - 1]), `progress not increasing: ${seen}`);
    return seen.join(", ");
  });

  await feature("cancellation", slow, async () => {
    const abort = new AbortController();
    let after = 0;
    let cancelled = false;
    const call = lib.call(client, { name: slow.name, arguments: {} }, {
      signal: abort.signal,
      onprogress: () => {
        if (cancelled) after += 1;
        else { cancelled = true; abort.abort("the feature run cancels it"); }
      },
    });
    const outcome = await call.then(() => "answered", (e) => e);
    check(outcome !== "answered", "the cancelled call was answered");
    await sleep(QUIET_MS);
    check(after === 0, `${after} progress notifications after the cancel`);
    check((await client.listTools()).tools.length, "no tools after the cancel");
    return "refused in the client, nothing after it, the server answers on";
  });

  await feature("pagination", caps.tools, async () => {
    let cursor;
    const names = [];
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor && names.length < 10000);
    check(names.length === new Set(names).size, "a tool listed twice across pages");
    const code = await client.listTools({ cursor: "no-such-cursor" }).then(() => null,
                                                                            (e) => e.code);
    check(code === -32602, `an unknown cursor got ${code}, not -32602`);
    return `${names.length} tools; an unknown cursor is -32602`;
  });

  const asks = named(/elicitation$/);
  await feature("elicitation", asks, async () => {
    // Counted from here: a prompt got earlier may have elicited too (the conformance board's
    // test_input_required_result_prompt).
    const before = answered.elicitation;
    const result = await lib.call(client, { name: asks.name,
                                            arguments: { message: "Who are you?" } });
    check(!result.isError && /ada/.test(text(result)), `answer not used: ${text(result)}`);
    check(answered.elicitation - before === 1,
          `${answered.elicitation - before} elicitations answered`);
    return text(result);
  });

  const samples = named(/sampling$/);
  await feature("sampling", samples, async () => {
    const result = await lib.call(client, { name: samples.name,
                                            arguments: { prompt: "What is 6 x 7?" } });
    check(!result.isError && /sampled-answer-42/.test(text(result)),
          `answer not used: ${text(result)}`);
    return text(result);
  });

  await client.close();
  console.log(JSON.stringify(report));
  process.exit(0);
}

main().catch((e) => {
  console.log(JSON.stringify({ sdk, fatal: String(e?.stack ?? e) }));
  process.exit(1);
});
