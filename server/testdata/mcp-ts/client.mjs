// client.mjs drives the reference server's MCP tools with the official TypeScript SDK, a
// client that is not ours, and prints what it saw as one JSON object for server/mcpts_test.go
// to judge. It checks only what it needs to go on (a confirmation token, a wait to honour);
// anything the SDK refuses (a result that fails its schema validation, a transport error, a
// failed version negotiation) is an exception, reported on stderr with a non-zero exit.
//
// Usage: node client.mjs <v1|v2> <protocol> <target>
//
//   v1        @modelcontextprotocol/sdk; v2 the split @modelcontextprotocol/client.
//   protocol  2025-11-25: the initialize handshake (v1 can speak nothing else);
//             2026-07-28: v2 pinned to that revision (server/discover, no fallback);
//             auto: v2 probes with server/discover and falls back to initialize.
//   target    the MCP endpoint's http URL (streamable HTTP), or the path of a remedy binary,
//             which the SDK's stdio transport launches as `remedy serve --stdio`.

const [sdk, protocol, target] = process.argv.slice(2);
const usage = "usage: node client.mjs <v1|v2> <2025-11-25|2026-07-28|auto> <MCP endpoint URL | remedy binary>";
if (!["v1", "v2"].includes(sdk) || !["2025-11-25", "2026-07-28", "auto"].includes(protocol) || !target) {
  console.error(usage);
  process.exit(2);
}
if (sdk === "v1" && protocol !== "2025-11-25") {
  // @modelcontextprotocol/sdk 1.x offers only its LATEST_PROTOCOL_VERSION (2025-11-25) in
  // initialize, and knows no server/discover.
  console.error(`client.mjs: the v1 SDK cannot be told to speak ${protocol}`);
  process.exit(2);
}
const stdio = !/^https?:/.test(target);

const { Client, StreamableHTTPClientTransport, StdioClientTransport } =
  sdk === "v2"
    ? {
        ...(await import("@modelcontextprotocol/client")),
        StdioClientTransport: (await import("@modelcontextprotocol/client/stdio")).StdioClientTransport,
      }
    : {
        Client: (await import("@modelcontextprotocol/sdk/client/index.js")).Client,
        StreamableHTTPClientTransport: (await import("@modelcontextprotocol/sdk/client/streamableHttp.js"))
          .StreamableHTTPClientTransport,
        StdioClientTransport: (await import("@modelcontextprotocol/sdk/client/stdio.js")).StdioClientTransport,
      };

// record keeps what the test asserts on of a tool result; textJSON is the parsed JSON of the
// first text content when it is JSON.
function record(res) {
  const texts = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
  let text = null;
  let textJSON = null;
  if (texts.length > 0) {
    text = texts[0];
    try {
      textJSON = JSON.parse(text);
    } catch {
      textJSON = null;
    }
  }
  return {
    isError: res.isError === true,
    contentCount: (res.content ?? []).length,
    text,
    textJSON,
    structuredContent: res.structuredContent ?? null,
    _meta: res._meta ?? null,
  };
}

function clientOptions() {
  switch (protocol) {
    case "2026-07-28":
      return { versionNegotiation: { mode: { pin: "2026-07-28" } } };
    case "auto":
      return { versionNegotiation: { mode: "auto" } };
    default:
      // v2's default mode is the 2025 initialize handshake; accepting only 2025-11-25 makes a
      // server that answers another version fail the connect.
      return sdk === "v2" ? { supportedProtocolVersions: ["2025-11-25"] } : {};
  }
}

async function main() {
  const client = new Client({ name: "remedy-ts-interop", version: "1.0.0" }, clientOptions());
  const transport = stdio
    ? new StdioClientTransport({ command: target, args: ["serve", "--stdio"] })
    : new StreamableHTTPClientTransport(new URL(target));
  // The version the initialize handshake settled on, which v1 keeps nowhere else but tells the
  // transport (a stdio transport has no such method, so it gets one).
  let initialized = null;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    initialized = v;
    setProtocolVersion?.(v);
  };
  await client.connect(transport);
  const out = {
    server: client.getServerVersion() ?? null,
    protocolVersion: client.getNegotiatedProtocolVersion?.() ?? initialized,
    sessionId: transport.sessionId ?? null,
  };

  // Tools, following nextCursor in case the server pages them.
  out.tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    for (const tool of page.tools) {
      const props = tool.inputSchema?.properties ?? {};
      out.tools.push({
        name: tool.name,
        hasConfirmationToken: Object.hasOwn(props, "confirmationToken"),
        hasIdempotencyKey: Object.hasOwn(props, "idempotencyKey"),
        required: tool.inputSchema?.required ?? [],
        annotations: tool.annotations ?? null,
        hasErrorsSection: (tool.description ?? "").includes("## Errors"),
      });
    }
    cursor = page.nextCursor;
  } while (cursor);

  out.badCreate = record(
    await client.callTool({
      name: "create_invoice",
      arguments: { customer_id: "cus_ada", currency: "EUR", amount: 0 },
    }),
  );

  // The same idempotency key twice: one charge, the second a replay. Before the deletion below,
  // which removes the customer charged.
  const chargeArgs = { customer_id: "cus_ada", amount: 500, currency: "usd", idempotencyKey: "ts-key-1" };
  out.charges = [
    record(await client.callTool({ name: "charge", arguments: chargeArgs })),
    record(await client.callTool({ name: "charge", arguments: chargeArgs })),
  ];

  // The revenue report counts what the charges took, so that a server whose store lives in
  // another process (stdio) still shows how many ran. The test has the report rebuilding (503
  // unavailable) at first: it is retried after the wait the envelope asks for, a few times.
  out.reports = [];
  for (let i = 0; i < 5; i++) {
    const res = record(await client.callTool({ name: "revenue_report", arguments: { currency: "usd" } }));
    out.reports.push(res);
    const err = res.textJSON?.error;
    if (!res.isError || err?.code !== "unavailable") break;
    await new Promise((r) => setTimeout(r, Math.min(err.retry_after_ms ?? 20, 1000)));
  }

  // The confirmation handshake: refused with a token, confirmed with it, and the token is spent.
  const ask = record(await client.callTool({ name: "delete_customer", arguments: { id: "cus_ada" } }));
  const token = ask.textJSON?.error?.confirmationToken;
  if (!ask.isError || ask.textJSON?.error?.code !== "confirmation_required" || !token) {
    throw new Error(`delete_customer without a token: want confirmation_required with a token, got ${JSON.stringify(ask)}`);
  }
  const confirmed = record(
    await client.callTool({ name: "delete_customer", arguments: { id: "cus_ada", confirmationToken: token } }),
  );
  const replayed = record(
    await client.callTool({ name: "delete_customer", arguments: { id: "cus_ada", confirmationToken: token } }),
  );
  out.confirmation = { required: ask, confirmed, replay: replayed };
  // The customer is gone: a new charge finds nobody.
  out.chargeDeleted = record(
    await client.callTool({ name: "charge", arguments: { ...chargeArgs, idempotencyKey: "ts-key-2" } }),
  );

  out.elicitation = await elicitation();

  if (out.sessionId && typeof transport.terminateSession === "function") {
    await transport.terminateSession();
    out.terminated = transport.sessionId === undefined;
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

// elicitation runs a second client that declares the elicitation capability and answers the
// server's confirmation questions as a person would: it declines the first, then accepts the
// second, each a delete_customer of cus_grace. Where the server can ask (a session it can send
// requests on, or protocol 2026-07-28, whose question comes in the tool's result), the
// deletion runs once, on the accepted question; where it cannot (a stateless endpoint with
// 2025-11-25), the client gets the token flow instead, and nothing is asked.
async function elicitation() {
  const answers = ["decline", "accept"];
  const questions = [];
  const capabilities = { elicitation: { form: {} } };
  const options = { ...clientOptions(), capabilities };
  const asking = new Client({ name: "remedy-ts-interop-person", version: "1.0.0" }, options);
  const answer = async (request) => {
    const params = request.params ?? {};
    questions.push({
      message: params.message ?? null,
      meta: params._meta ?? null,
      properties: Object.keys(params.requestedSchema?.properties ?? {}),
    });
    const action = answers.shift() ?? "cancel";
    return action === "accept" ? { action, content: { approve: true } } : { action };
  };
  if (sdk === "v2") {
    asking.setRequestHandler("elicitation/create", answer);
  } else {
    const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    asking.setRequestHandler(ElicitRequestSchema, answer);
  }
  const t = stdio
    ? new StdioClientTransport({ command: target, args: ["serve", "--stdio"] })
    : new StreamableHTTPClientTransport(new URL(target));
  await asking.connect(t);
  const args = { id: "cus_grace" };
  const declined = record(await asking.callTool({ name: "delete_customer", arguments: args }));
  const accepted = record(await asking.callTool({ name: "delete_customer", arguments: args }));
  await asking.close();
  return { declined, accepted, questions };
}

main().catch((err) => {
  console.error(`client.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
