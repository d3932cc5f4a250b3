// app.mjs is a small AgentBack app (npm @agentback/*) for remedy's interoperability tests (the
// _test.go files beside it): a shop whose operations fail the way AgentBack makes them fail,
// served over REST (with its generated OpenAPI document) and as MCP tools over streamable HTTP.
//
// Usage: node app.mjs [port [window]]
//
// port 0 or none: any free port; window: the seconds of the rate limits' window (default 1:
// one quote a second on each surface).
//
// It listens on 127.0.0.1 and prints its base URL as the first line of stdout. It exits when
// its standard input closes, so that it never outlives the test that started it.
//
// Every failure comes from AgentBack's own features wherever AgentBack has one:
//   - validation: zod schemas on the route and the tool (enum, bounds, pattern, required);
//   - confirmation: `confirm: true` on the route and the tool;
//   - idempotency: `idempotency: {required: true}` on the route (AgentBack's MCP tools have
//     no idempotency support);
//   - rate limits: @agentback/extension-rate-limit on REST, mcp-http's per-tool `rateLimit`
//     on MCP, one quote per window;
//   - a report that is being rebuilt: AgentError with status 503 (AgentBack has no notion of
//     a wait in its envelope, so the REST route sets Retry-After itself; over MCP the wait
//     cannot be said at all).
//
// The test reads how many times each operation executed from GET /__interop/counts, and arms
// the report's 503 with POST /__interop/busy?n=N (both plain Express routes, outside the
// OpenAPI document).

import {z} from 'zod';
import {__decorate, __param} from 'tslib';
import {inject} from '@agentback/core';
import {AgentError, api, get, post} from '@agentback/openapi';
import {RestApplication, RestBindings} from '@agentback/rest';
import {MCPBindings, MCPComponent, mcpServer, tool} from '@agentback/mcp';
import {installMcpHttp} from '@agentback/mcp-http';
import {installRateLimit} from '@agentback/extension-rate-limit';

const port = Number(process.argv[2] ?? 0);
const windowSecs = Number(process.argv[3] ?? 1);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(windowSecs) || windowSecs < 1) {
  console.error('usage: node app.mjs [port [window]]');
  process.exit(2);
}

// The shop's state: what executed, and how many report calls answer 503 before one succeeds
// (the first after start does).
const executed = {create_order: 0, close_account: 0, charge: 0, quote: 0, report: 0};
let busy = 1;
let lastID = 0;
const newID = prefix => `${prefix}_${++lastID}`;

const Currency = z.enum(['usd', 'eur', 'gbp']);
const CustomerID = z.string().regex(/^cus_[a-z0-9]+$/);
const NewOrder = z.object({
  customer_id: CustomerID,
  currency: Currency,
  amount: z.number().int().min(1).max(1000000),
  memo: z.string().max(200).optional(),
});
const Order = NewOrder.extend({id: z.string()});
const CloseAccount = z.object({
  account_id: z.string().regex(/^acct_[a-z0-9]+$/),
  reason: z.enum(['requested', 'fraud', 'duplicate']),
});
const Closed = CloseAccount.extend({closed: z.boolean()});
const NewCharge = z.object({
  customer_id: CustomerID,
  amount: z.number().int().min(50).max(1000000),
  currency: Currency,
});
const Charge = NewCharge.extend({id: z.string()});
const QuoteQuery = z.object({currency: Currency});
const Quote = z.object({currency: Currency, rate: z.number()});
const Report = z.object({orders: z.number().int(), charges: z.number().int()});

const shop = {
  createOrder(input) {
    executed.create_order++;
    return {id: newID('ord'), ...input};
  },
  closeAccount(input) {
    executed.close_account++;
    return {...input, closed: true};
  },
  charge(input) {
    executed.charge++;
    return {id: newID('ch'), ...input};
  },
  quote(input) {
    executed.quote++;
    return {currency: input.currency, rate: {usd: 1, eur: 0.92, gbp: 0.79}[input.currency]};
  },
  report() {
    if (busy > 0) {
      busy--;
      throw new AgentError('The daily report is being rebuilt; retry in a second.', {
        status: 503,
        code: 'unavailable',
      });
    }
    executed.report++;
    return {orders: executed.create_order, charges: executed.charge};
  },
};

// REST. Without a build step, decorators are applied as TypeScript compiles them (tslib's
// __decorate and __param), which is all the `@` syntax does.
class Shop {
  async createOrder(input) {
    return shop.createOrder(input.body);
  }
  async closeAccount(input) {
    return shop.closeAccount(input.body);
  }
  async charge(input) {
    return shop.charge(input.body);
  }
  async quote(input) {
    return shop.quote(input.query);
  }
  async report(res) {
    try {
      return shop.report();
    } catch (err) {
      // AgentError has no way to say a wait: the header is the route's own doing.
      if (err.statusCode === 503) res.setHeader('Retry-After', '1');
      throw err;
    }
  }
}
__decorate(
  [post('/orders', {body: NewOrder, response: Order, status: 201, summary: 'Create an order'})],
  Shop.prototype, 'createOrder', null);
__decorate(
  [post('/accounts/close', {body: CloseAccount, response: Closed, confirm: true,
    summary: 'Close an account (needs confirmation)'})],
  Shop.prototype, 'closeAccount', null);
__decorate(
  [post('/charges', {body: NewCharge, response: Charge, status: 201, idempotency: {required: true},
    summary: 'Charge a customer (needs an idempotency key)'})],
  Shop.prototype, 'charge', null);
__decorate(
  [get('/quotes', {query: QuoteQuery, response: Quote, summary: 'Quote a currency (rate limited)'})],
  Shop.prototype, 'quote', null);
__decorate(
  [get('/reports/daily', {response: Report, summary: 'The daily report (sometimes being rebuilt)'}),
    __param(0, inject(RestBindings.HTTP_RESPONSE))],
  Shop.prototype, 'report', null);
const ShopAPI = __decorate([api({basePath: '/v1'})], Shop);

// MCP: the same operations as tools.
class ShopTools {
  async createOrder(input) {
    return shop.createOrder(input);
  }
  async closeAccount(input) {
    return shop.closeAccount(input);
  }
  async charge(input) {
    return shop.charge(input);
  }
  async quote(input) {
    return shop.quote(input);
  }
  async report() {
    return shop.report();
  }
}
__decorate([tool('create_order', {input: NewOrder, output: Order, description: 'Create an order'})],
  ShopTools.prototype, 'createOrder', null);
__decorate([tool('close_account', {input: CloseAccount, output: Closed, confirm: true,
  description: 'Close an account (needs confirmation)'})],
  ShopTools.prototype, 'closeAccount', null);
__decorate([tool('charge', {input: NewCharge, output: Charge, description: 'Charge a customer'})],
  ShopTools.prototype, 'charge', null);
__decorate([tool('get_quote', {input: QuoteQuery, output: Quote, description: 'Quote a currency (rate limited)'})],
  ShopTools.prototype, 'quote', null);
__decorate([tool('daily_report', {output: Report, description: 'The daily report (sometimes being rebuilt)'})],
  ShopTools.prototype, 'report', null);
const ShopMCP = __decorate([mcpServer()], ShopTools);

const app = new RestApplication({rest: {port, host: '127.0.0.1'}});
app.restController(ShopAPI);
// No stdio transport: stdout is the test's.
app.configure(MCPBindings.SERVER).to({name: 'agentback-shop', version: '1.0.0', transports: {stdio: false}});
app.component(MCPComponent);
app.service(ShopMCP);
await installMcpHttp(app, {
  rateLimit: {points: 10000, durationSecs: 60, perTool: {get_quote: {points: 1, durationSecs: windowSecs}}},
});
await installRateLimit(app, {path: '/v1/quotes', points: 1, durationSecs: windowSecs});

const server = await app.restServer;
server.expressApp.get('/__interop/counts', (_req, res) => res.json(executed));
server.expressApp.post('/__interop/busy', (req, res) => {
  busy = Number(req.query.n ?? 1);
  res.json({busy});
});

await app.start();
console.log(server.url);

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
