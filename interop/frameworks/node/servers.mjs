// servers.mjs starts each Node framework of ../node_test.go in the setup its own documentation
// shows, every one serving the same small API (orders.openapi.json says it in OpenAPI), each on
// a free loopback port, and prints the ports as one JSON line: {"fastify": 40123, ...}. It
// exits when its standard input closes, so that it never outlives the test that started it.
//
// The API: POST /orders takes {color: "red"|"green"|"blue", quantity: integer <= 100,
// lines?: [{sku: string, quantity?: integer <= 100}]}, color and quantity required;
// GET /orders takes ?limit, an integer <= 50; GET /limited is behind the framework's standard
// rate-limit middleware (where it has one), 2 requests a minute.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const specFile = here('orders.openapi.json');
const spec = JSON.parse(readFileSync(specFile, 'utf8'));
const order = spec.components.schemas.Order;
const limitSchema = spec.paths['/orders'].get.parameters[0].schema;

// listen starts a node:http server (an Express app, Nest's adapter...) on a free loopback port.
function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

// fastify: JSON schemas on the routes (validated by ajv, fastify's default), and
// @fastify/rate-limit as its README registers it.
async function fastify() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  await app.register(import('@fastify/rate-limit'), { global: false });
  app.post('/orders', { schema: { body: order } }, async (req, reply) => reply.code(201).send({ id: 'o1' }));
  app.get('/orders', {
    schema: { querystring: { type: 'object', properties: { limit: limitSchema } } },
  }, async () => []);
  app.get('/limited', { config: { rateLimit: { max: 2, timeWindow: '1 minute' } } }, async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address().port;
}

// expressRateLimit is express-rate-limit as its README sets it up, 2 requests a minute.
async function expressRateLimit() {
  const { rateLimit } = await import('express-rate-limit');
  return rateLimit({ windowMs: 60 * 1000, limit: 2, standardHeaders: 'draft-8', legacyHeaders: false });
}

// expressOpenAPI: express 5 with express-openapi-validator on orders.openapi.json, and the
// error handler of the validator's README.
async function expressOpenAPI() {
  const { default: express } = await import('express');
  const OpenApiValidator = await import('express-openapi-validator');
  const app = express();
  app.use(express.json());
  app.use(OpenApiValidator.middleware({ apiSpec: specFile, validateRequests: true, validateResponses: false }));
  app.post('/orders', (req, res) => res.status(201).json({ id: 'o1' }));
  app.get('/orders', (req, res) => res.json([]));
  app.use((err, req, res, next) => {
    // format error
    res.status(err.status || 500).json({
      message: err.message,
      errors: err.errors,
    });
  });
  return listen((await import('node:http')).createServer(app));
}

// expressValidator: express 5 with express-validator's validation chains and the answer of
// its README (res.status(400).json({ errors: result.array() })), and express-rate-limit.
async function expressValidator() {
  const { default: express } = await import('express');
  const { body, query, validationResult } = await import('express-validator');
  const app = express();
  app.use(express.json());
  const check = (req, res, next) => {
    const result = validationResult(req);
    if (!result.isEmpty()) {
      return res.status(400).json({ errors: result.array() });
    }
    next();
  };
  app.post('/orders',
    body('color').isIn(['red', 'green', 'blue']),
    body('quantity').isInt({ max: 100 }),
    body('lines').optional().isArray(),
    body('lines.*.sku').isString(),
    body('lines.*.quantity').optional().isInt({ max: 100 }),
    check,
    (req, res) => res.status(201).json({ id: 'o1' }));
  app.get('/orders', query('limit').optional().isInt({ max: 50 }), check, (req, res) => res.json([]));
  app.get('/limited', await expressRateLimit(), (req, res) => res.json({ ok: true }));
  return listen((await import('node:http')).createServer(app));
}

// nest: NestJS with the global ValidationPipe and class-validator DTOs, the decorators applied
// as functions (this file is plain JavaScript) and the design-time types that TypeScript's
// emitDecoratorMetadata would record set with reflect-metadata.
async function nest() {
  const { NestFactory } = await import('@nestjs/core');
  const { Module, Controller, Post, Get, Body, Query, ValidationPipe, HttpCode } = await import('@nestjs/common');
  const { IsIn, IsInt, Max, IsNotEmpty, IsString, IsOptional, IsArray, ValidateNested } = await import('class-validator');
  const { Type } = await import('class-transformer');

  const property = (cls, name, type, ...decorators) => {
    Reflect.defineMetadata('design:type', type, cls.prototype, name);
    for (const d of decorators) d(cls.prototype, name);
  };
  class Line {}
  property(Line, 'sku', String, IsString(), IsNotEmpty());
  property(Line, 'quantity', Number, IsOptional(), IsInt(), Max(100));
  class CreateOrder {}
  property(CreateOrder, 'color', String, IsNotEmpty(), IsIn(['red', 'green', 'blue']));
  property(CreateOrder, 'quantity', Number, IsInt(), Max(100));
  property(CreateOrder, 'lines', Array, IsOptional(), IsArray(), ValidateNested({ each: true }), Type(() => Line));
  class ListOrders {}
  property(ListOrders, 'limit', Number, IsOptional(), Type(() => Number), IsInt(), Max(50));

  const method = (cls, name, paramTypes, ...decorators) => {
    Reflect.defineMetadata('design:paramtypes', paramTypes, cls.prototype, name);
    const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
    for (const d of decorators) d(cls.prototype, name, descriptor);
  };
  class OrdersController {
    create(order) { return { id: 'o1' }; }
    list(query) { return []; }
  }
  method(OrdersController, 'create', [CreateOrder], Post(), HttpCode(201));
  Body()(OrdersController.prototype, 'create', 0);
  method(OrdersController, 'list', [ListOrders], Get());
  Query()(OrdersController.prototype, 'list', 0);
  Controller('orders')(OrdersController);
  class AppModule {}
  Module({ controllers: [OrdersController] })(AppModule);

  const app = await NestFactory.create(AppModule, { logger: false });
  app.useGlobalPipes(new ValidationPipe());
  await app.listen(0, '127.0.0.1');
  return app.getHttpServer().address().port;
}

// hono: Hono with @hono/zod-validator's default hook, on zod 3 schemas or zod 4 ones.
async function hono(z) {
  const { Hono } = await import('hono');
  const { zValidator } = await import('@hono/zod-validator');
  const { serve } = await import('@hono/node-server');
  const Order = z.object({
    color: z.enum(['red', 'green', 'blue']),
    quantity: z.number().int().max(100),
    lines: z.array(z.object({ sku: z.string(), quantity: z.number().int().max(100).optional() })).optional(),
  });
  const List = z.object({ limit: z.coerce.number().int().max(50).optional() });
  const app = new Hono();
  app.post('/orders', zValidator('json', Order), (c) => c.json({ id: 'o1' }, 201));
  app.get('/orders', zValidator('query', List), (c) => c.json([]));
  return new Promise((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
}

// celebrate: Express with celebrate's Joi schemas and its errors() middleware.
async function celebrate() {
  const { default: express } = await import('express');
  const { celebrate, Joi, errors, Segments } = await import('celebrate');
  const app = express();
  app.use(express.json());
  const line = Joi.object({ sku: Joi.string().required(), quantity: Joi.number().integer().max(100) });
  app.post('/orders', celebrate({
    [Segments.BODY]: Joi.object({
      color: Joi.string().valid('red', 'green', 'blue').required(),
      quantity: Joi.number().integer().max(100).required(),
      lines: Joi.array().items(line),
    }),
  }), (req, res) => res.status(201).json({ id: 'o1' }));
  app.get('/orders', celebrate({
    [Segments.QUERY]: Joi.object({ limit: Joi.number().integer().max(50) }),
  }), (req, res) => res.json([]));
  app.use(errors());
  return listen((await import('node:http')).createServer(app));
}

// prism: Stoplight Prism's mock server on orders.openapi.json, with request validation (the
// CLI's `prism mock`, through the same calls).
async function prism() {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const { getHttpOperationsFromSpec } = require('@stoplight/prism-http');
  const { createServer } = require('@stoplight/prism-http-server');
  const { createLogger } = require('@stoplight/prism-core');
  const { PassThrough } = require('node:stream');
  const operations = await getHttpOperationsFromSpec(specFile);
  const logs = new PassThrough();
  logs.resume(); // the CLI prints them; here they are dropped
  const server = createServer(operations, {
    cors: true,
    config: {
      validateRequest: true,
      validateResponse: true,
      checkSecurity: true,
      errors: false,
      upstreamProxy: undefined,
      mock: { dynamic: false },
      isProxy: false,
    },
    components: { logger: createLogger('CLI', {}, logs) },
  });
  const address = await server.listen(0, '127.0.0.1');
  return Number(new URL(address).port);
}

const { z: zod3 } = await import('zod');
const { z: zod4 } = await import('zod4');
const ports = {
  fastify: await fastify(),
  'express-openapi-validator': await expressOpenAPI(),
  'express-validator': await expressValidator(),
  nestjs: await nest(),
  'hono-zod3': await hono(zod3),
  'hono-zod4': await hono(zod4),
  celebrate: await celebrate(),
  prism: await prism(),
};
process.stdout.write(JSON.stringify(ports) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
