// Records the tool results the official TypeScript MCP SDK sends when a tool's arguments fail
// its zod input schema: a real McpServer with a zod schema, called by a real Client over the
// SDK's in-memory transport, each answer written as the corpus's .http exactly as the server
// sent it (the JSON-RPC response: a result with isError, or an error). Current SDKs write each zod issue as "message at path" lines; older ones
// (1.17) the zod issues as a JSON array. From the repository root:
//
//   (cd server/testdata/mcp-ts && npm ci --ignore-scripts)
//   node testdata/envelopes/capture/mcp_ts_zod.mjs server/testdata/mcp-ts ts-sdk
//   (cd testdata/envelopes/capture/ts-sdk-1.17 && npm ci --ignore-scripts)
//   node testdata/envelopes/capture/mcp_ts_zod.mjs testdata/envelopes/capture/ts-sdk-1.17 ts-sdk-1.17
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..', '..');
const [sdkDir, prefix] = process.argv.slice(2);
const require = createRequire(path.resolve(root, sdkDir, 'package.json'));
const { McpServer } = await import(require.resolve('@modelcontextprotocol/sdk/server/mcp.js'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { InMemoryTransport } = await import(require.resolve('@modelcontextprotocol/sdk/inMemory.js'));
const { z } = await import(require.resolve('zod'));

const server = new McpServer({ name: 'orders', version: '1.0.0' });
server.registerTool('create_payment', {
  description: 'Charge a customer',
  inputSchema: {
    amount: z.number().int().min(1).max(10000),
    currency: z.enum(['usd', 'eur', 'gbp']),
    customer: z.object({ email: z.string().email(), tags: z.array(z.string()).max(2) }),
  },
}, async () => ({ content: [{ type: 'text', text: 'ok' }] }));

const [ct, st] = InMemoryTransport.createLinkedPair();
await server.connect(st);
const client = new Client({ name: 'capture', version: '1.0.0' });
await client.connect(ct);
let last; // the server's last message, as it arrived
const deliver = ct.onmessage;
ct.onmessage = (msg, extra) => { last = msg; deliver(msg, extra); };

const cases = [
  [prefix + '-zod-invalid-arguments', { amount: '1200', currency: 'USD', customer: { email: 'ada', tags: ['a', 'b', 'c'] } }],
  [prefix + '-zod-missing-argument', { amount: 0, currency: 'eur' }],
];
for (const [name, args] of cases) {
  await client.callTool({ name: 'create_payment', arguments: args }).catch(() => {}); // 1.17 answers with a JSON-RPC error
  const dialect = last.error ? 'jsonrpc' : 'mcp';
  const file = path.join(root, 'testdata', 'envelopes', dialect, name + '.http');
  writeFileSync(file, 'HTTP/1.1 200 OK\nContent-Type: application/json\n\n' + JSON.stringify(last) + '\n');
}
await client.close();
