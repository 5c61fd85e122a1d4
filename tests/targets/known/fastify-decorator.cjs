// Fastify refuses hooks once it listens (FST_ERR_INSTANCE_ALREADY_LISTENING:
// GET /hook answers 500), so per-request state grows where Fastify lets
// it: a decorator, here a Map every request adds to from an onRequest hook
// registered at start-up.
const fastify = require('fastify')();

fastify.decorate('seen', new Map());
fastify.addHook('onRequest', async (request) => {
  if (request.url !== '/') return;
  fastify.seen.set(`${request.id}:${Date.now()}`, { url: request.url, headers: { ...request.headers } });
});
fastify.get('/', async () => 'ok');
fastify.get('/hook', async () => {
  fastify.addHook('onRequest', async () => {});
  return 'added';
});
fastify.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });
