// A shop API of 14 routes, one of them leaking, served by the framework
// named on the command line: the same routes in each, so that route
// discovery is tested on every router it reads (tests/it/routes.rs).
//
//   node shop.cjs PORT express|express5|fastify|koa|hapi
//
// GET /products/:id/reviews keeps every review it renders in
// `reviewCache`, keyed by the product id and never evicted: the leak.
// Every other route keeps nothing. /admin/stats answers 401 without a
// token; /old-catalog redirects to /catalog.
const [port, framework] = [Number(process.argv[2]), process.argv[3] ?? 'express'];

const reviewCache = new Map();
const products = (id) => ({ id, name: `product ${id}`, price: 10 + (Number(id) % 7) });

// Each handler: (params, query, body) -> [status, payload, headers?]
const routes = [
  ['GET', '/', () => [200, { shop: 'ok' }]],
  ['GET', '/health', () => [200, { up: true }]],
  ['GET', '/catalog', (p, q) => [200, { page: Number(q.page ?? 1), items: [1, 2, 3].map(products) }]],
  ['GET', '/products/:id', (p) => [200, products(p.id)]],
  ['GET', '/products/:id/reviews', (p) => {
    if (!reviewCache.has(p.id)) {
      reviewCache.set(p.id, Array.from({ length: 5 }, (_, i) => ({ stars: 1 + (i % 5), text: 'r'.repeat(200) })));
    }
    return [200, { count: reviewCache.get(p.id).length }];
  }],
  ['GET', '/categories/:slug', (p) => [200, { slug: p.slug, count: p.slug.length }]],
  ['GET', '/search', (p, q) => [200, { q: q.q ?? '', hits: String(q.q ?? '').length }]],
  ['GET', '/users/:userId/orders', (p) => [200, { user: p.userId, orders: [] }]],
  ['GET', '/users/:userId/cart', (p) => [200, { user: p.userId, items: 0 }]],
  ['GET', '/stores/:storeId/hours', (p) => [200, { store: p.storeId, open: '9-17' }]],
  ['GET', '/admin/stats', (p, q, b, headers) =>
    headers.authorization === 'Bearer test' ? [200, { orders: 0 }] : [401, { error: 'login' }]],
  ['GET', '/old-catalog', () => [302, {}, { location: '/catalog' }]],
  ['POST', '/orders', (p, q, body) => [201, { ok: true, item: body?.item ?? null }]],
  ['DELETE', '/orders/:orderId', (p) => [204, null]],
];

function send(res, [status, payload, headers = {}]) {
  const text = payload === null ? '' : JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

if (framework === 'express' || framework === 'express5') {
  const express = require(framework);
  const app = express();
  app.use(express.json());
  // The user routes on a router mounted under /users, as apps split them.
  const users = express.Router();
  for (const [method, path, handle] of routes) {
    const target = path.startsWith('/users') ? users : app;
    const local = path.startsWith('/users') ? path.slice('/users'.length) : path;
    target[method.toLowerCase()](local, (req, res) =>
      send(res, handle(req.params, req.query, req.body, req.headers)));
  }
  app.use('/users', users);
  app.listen(port, '127.0.0.1');
} else if (framework === 'fastify') {
  const app = require('fastify')();
  for (const [method, path, handle] of routes) {
    app.route({ method, url: path, handler: (req, reply) => {
      const [status, payload, headers = {}] = handle(req.params, req.query, req.body, req.headers);
      reply.code(status).headers(headers).send(payload ?? undefined);
    } });
  }
  app.listen({ port, host: '127.0.0.1' });
} else if (framework === 'koa') {
  const Koa = require('koa');
  const Router = require('@koa/router');
  const app = new Koa();
  const router = new Router();
  for (const [method, path, handle] of routes) {
    router[method.toLowerCase()](path, (ctx) => {
      const [status, payload, headers = {}] = handle(ctx.params, ctx.query, null, ctx.headers);
      ctx.status = status;
      ctx.set(headers);
      if (payload !== null) ctx.body = payload;
    });
  }
  app.use(router.routes());
  app.listen(port, '127.0.0.1');
} else if (framework === 'hapi') {
  const Hapi = require('@hapi/hapi');
  const server = Hapi.server({ port, host: '127.0.0.1' });
  for (const [method, path, handle] of routes) {
    server.route({
      method,
      path: path.replace(/:(\w+)/g, '{$1}'),
      handler: (req, h) => {
        const [status, payload, headers = {}] = handle(req.params, req.query, req.payload, req.headers);
        const response = h.response(payload ?? undefined).code(status);
        for (const [k, v] of Object.entries(headers)) response.header(k, v);
        return response;
      },
    });
  }
  server.start();
} else {
  throw new Error(`unknown framework ${framework}`);
}
