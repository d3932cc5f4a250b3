// client.mjs drives remedy's reference server (the billing API of `remedy serve`) with
// AgentBack's own HTTP client, @agentback/client, the way an AgentBack user would: typed routes
// whose non-2xx answers are declared with AgentBack's error envelope (ErrorEnvelope and
// ParseIssue of @agentback/openapi), and the agent's part — repairing from the issues,
// confirming, keying, waiting — done by hand, since the client does none of it. It prints what
// it saw as one JSON object for client_test.go to judge.
//
// Usage: node client.mjs BASE_URL LIMITED_URL
//
// BASE_URL serves the billing API; LIMITED_URL the same with a rate limit that lets one
// request through.

import {z} from 'zod';
import {ClientError, createClient, defineRoute} from '@agentback/client';

const [base, limited] = process.argv.slice(2);
if (!base || !limited) {
  console.error('usage: node client.mjs BASE_URL LIMITED_URL');
  process.exit(2);
}

// AgentBack's envelope, member for member as its TypeScript types declare it. An object that
// has more members still parses (zod objects ignore unknown keys).
const Issue = z.object({
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  code: z.string().optional(),
  expected: z.string().optional(),
  received: z.string().optional(),
});
const Envelope = z.object({
  error: z.object({
    statusCode: z.number().int().optional(),
    code: z.string(),
    message: z.string(),
    issues: z.array(Issue).optional(),
    schema: z.unknown().optional(),
    retryable: z.boolean().optional(),
    hint: z.string().optional(),
    confirmationToken: z.string().optional(),
  }),
});
const failures = Object.fromEntries([400, 404, 409, 422, 429, 503].map(status => [status, Envelope]));

// The client gives no access to a success's headers: a fetch of our own keeps the last answer.
let last;
const client = createClient({
  baseURL: base,
  timeoutMs: 30_000,
  fetch: async (url, init) => (last = await fetch(url, init)),
});
const limitedClient = createClient({baseURL: limited, timeoutMs: 30_000});

const Invoice = z.object({
  id: z.string(),
  customer_id: z.string(),
  currency: z.string(),
  amount: z.number(),
  status: z.string(),
});
const Charge = z.object({id: z.string(), customer_id: z.string(), amount: z.number(), currency: z.string()});
const Report = z.object({currency: z.string(), invoiced: z.number(), charged: z.number()});

// Bodies are declared loose: the client validates a body before sending it, and these calls
// send invalid ones on purpose.
const Body = z.looseObject({});
const createInvoice = defineRoute('POST', '/v1/invoices', {body: Body, response: Invoice, responses: failures});
const deleteCustomer = defineRoute('DELETE', '/v1/customers/{id}', {
  path: z.object({id: z.string()}),
  response: z.object({id: z.string(), deleted: z.boolean()}),
  responses: failures,
});
const charge = defineRoute('POST', '/v1/charges', {body: Body, response: Charge, responses: failures});
const report = defineRoute('GET', '/v1/reports/revenue', {
  query: z.object({currency: z.string()}),
  response: Report,
  responses: failures,
});
const unknown = defineRoute('GET', '/v1/no/such/route', {responses: failures});

const HEADERS = ['retry-after', 'idempotency-replayed', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
function headers(h) {
  const out = {};
  for (const name of HEADERS) {
    const v = h?.get(name);
    if (v != null) out[name] = v;
  }
  return out;
}

// attempt runs one call and records its outcome: the result, or the ClientError's status,
// message, body, whether the body parsed as AgentBack's envelope (parsedBody), and headers.
async function attempt(call) {
  try {
    const data = await call();
    return {ok: true, data, headers: headers(last?.headers)};
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const typed = err.parsedBody !== undefined;
    let typeErrors = null;
    if (!typed && err.body && typeof err.body === 'object') {
      const parsed = Envelope.safeParse(err.body);
      typeErrors = parsed.success ? null : parsed.error.issues.map(i => `${i.path.join('.')}: ${i.message}`);
    }
    return {
      ok: false,
      status: err.status,
      message: err.message,
      body: err.body ?? null,
      typed,
      typeErrors,
      headers: headers(err.response?.headers),
    };
  }
}

const out = {};

// Validation: the failure read typed, then repaired from what its issues say.
{
  const first = await attempt(() =>
    createInvoice.call(client, {body: {customer_id: 'cus_ada', currency: 'EUR', amount: '1200'}}));
  const fixed = {customer_id: 'cus_ada', currency: 'EUR', amount: '1200'};
  for (const issue of first.body?.error?.issues ?? []) {
    if ('suggested_value' in issue) fixed[issue.path[0]] = issue.suggested_value;
  }
  const repaired = await attempt(() => createInvoice.call(client, {body: fixed}));
  const outOfRange = await attempt(() =>
    createInvoice.call(client, {body: {customer_id: 'cus_ada', currency: 'usd', amount: 99999999}}));
  out.validation = {first, fixed, repaired, outOfRange};
}

// Confirmation: AgentBack's header name for the token, and the same call again.
{
  const call = opts => attempt(() => deleteCustomer.call(client, {path: {id: 'cus_ada'}}, opts));
  const first = await call();
  const token = first.body?.error?.confirmationToken;
  const confirmed = await call({headers: {'x-confirmation-token': token}});
  const again = await call({headers: {'x-confirmation-token': token}});
  out.confirmation = {first, confirmed, again};
}

// Idempotency: AgentBack's header name for the key.
{
  const args = {customer_id: 'cus_grace', amount: 4200, currency: 'usd'};
  const call = (body, key) =>
    attempt(() => charge.call(client, {body}, key ? {headers: {'idempotency-key': key}} : undefined));
  const noKey = await call(args);
  const first = await call(args, 'agentback-interop-1');
  const replay = await call(args, 'agentback-interop-1');
  const reused = await call({...args, amount: 4300}, 'agentback-interop-1');
  out.idempotency = {noKey, first, replay, reused};
}

// A retry: the client has none, so the caller waits what the failure says and calls again.
{
  const call = () => attempt(() => report.call(client, {query: {currency: 'usd'}}));
  const first = await call();
  const waitMs = first.body?.error?.retry_after_ms ?? 1000 * Number(first.headers['retry-after'] ?? 1);
  await new Promise(resolve => setTimeout(resolve, waitMs));
  const second = await call();
  out.retry = {first, waitMs, second};
}

// A rate limit: calls in quick succession until one is refused (bounded).
{
  const tries = [];
  for (let i = 0; i < 20; i++) {
    const r = await attempt(() => report.call(limitedClient, {query: {currency: 'usd'}}));
    tries.push(r.status);
    if (r.status === 429) {
      out.rateLimited = r;
      break;
    }
  }
  out.rateTries = tries;
}

out.unknownRoute = await attempt(() => unknown.call(client));

console.log(JSON.stringify(out));
