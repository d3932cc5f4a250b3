// shutdown.mjs connects the official TypeScript SDK's client to the reference server's
// stateful MCP endpoint and keeps its session open, with the standalone event stream (the GET
// the SDK opens after initialize), while server/mcp_shutdown_test.go shuts the server down.
//
// Usage: node shutdown.mjs <v1|v2> <MCP endpoint URL>
//
// It prints "open" on a line of its own once the event stream has been answered 200, then
// waits for its standard input to end (the test closes it once the server has shut down) and
// prints one JSON object: {"sessionId": ..., "stream": "end"} when the server ended the event
// stream properly, or "stream": "cut: <error>" when the stream broke off.

const [sdk, target] = process.argv.slice(2);
if (!["v1", "v2"].includes(sdk) || !/^https?:/.test(target ?? "")) {
  console.error("usage: node shutdown.mjs <v1|v2> <MCP endpoint URL>");
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

// The first event stream the SDK opens is watched: its body passes through a stream that
// records how it ended.
let watched = false;
let resolveEnd;
const streamEnd = new Promise((resolve) => (resolveEnd = resolve));
async function watchingFetch(url, init) {
  const res = await fetch(url, init);
  const method = (init?.method ?? "GET").toUpperCase();
  if (watched || method !== "GET" || res.status !== 200 || !res.body) {
    return res;
  }
  watched = true;
  const pass = new TransformStream({ flush: () => resolveEnd("end") });
  res.body.pipeTo(pass.writable).catch((err) => resolveEnd(`cut: ${err?.message ?? err}`));
  process.stdout.write("open\n");
  return new Response(pass.readable, { status: res.status, statusText: res.statusText, headers: res.headers });
}

async function main() {
  // v2's default is the 2025 initialize handshake, which the stateful endpoint speaks.
  const options = sdk === "v2" ? { supportedProtocolVersions: ["2025-11-25"] } : {};
  const client = new Client({ name: "remedy-ts-shutdown", version: "1.0.0" }, options);
  // Once the server is gone the SDK's attempts to reopen the stream fail: expected here.
  client.onerror = () => {};
  const transport = new StreamableHTTPClientTransport(new URL(target), { fetch: watchingFetch });
  await client.connect(transport);
  const sessionId = transport.sessionId ?? null;

  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on("end", resolve));
  const stream = watched ? await streamEnd : "never opened";
  process.stdout.write(JSON.stringify({ sessionId, stream }) + "\n");
  process.exit(0);
}

main().catch((err) => {
  console.error(`shutdown.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
