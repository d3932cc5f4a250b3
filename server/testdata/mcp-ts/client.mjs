// client.mjs drives the reference server's MCP endpoint with the official TypeScript SDK, a
// client that is not ours, and prints what it saw as one JSON object for server/mcpts_test.go
// to judge. It checks only what it needs to go on (a confirmation token); anything the SDK
// refuses (a result that fails its schema validation, a transport error) is an exception,
// reported on stderr with a non-zero exit.
//
// Usage: node client.mjs http://127.0.0.1:PORT/mcp [v1|v2]
//
// v1 (the default) is @modelcontextprotocol/sdk, v2 the split @modelcontextprotocol/client.

const endpoint = process.argv[2];
const sdk = process.argv[3] ?? "v1";
if (!endpoint || !["v1", "v2"].includes(sdk)) {
  console.error("usage: node client.mjs <MCP endpoint URL> [v1|v2]");
  process.exit(2);
}
const { Client, StreamableHTTPClientTransport } =
  sdk === "v2"
    ? await import("@modelcontextprotocol/client")
    : {
        Client: (await import("@modelcontextprotocol/sdk/client/index.js")).Client,
        StreamableHTTPClientTransport: (await import("@modelcontextprotocol/sdk/client/streamableHttp.js"))
          .StreamableHTTPClientTransport,
      };

// record keeps what the test asserts on of a tool result; text is the parsed JSON of the single
// text content when it is JSON (the raw text when it is not).
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

async function main() {
  const client = new Client({ name: "remedy-ts-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint));
  await client.connect(transport);
  const out = {
    server: client.getServerVersion() ?? null,
    protocolVersion: transport.protocolVersion ?? null,
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
  out.confirmation = {
    required: ask,
    token,
    confirmed,
    replay: replayed,
    replayCode: replayed.textJSON?.error?.code ?? null,
  };

  await transport.terminateSession();
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  console.error(`client.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
