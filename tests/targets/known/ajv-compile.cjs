// Ajv's `compile` called per request with a new schema object: Ajv caches
// every compiled schema by its object (`_cache`), so each call adds a
// compiled validator that is never freed. Compile once at start-up.
const http = require('node:http');
const Ajv = require('ajv');

const ajv = new Ajv();

http
  .createServer((req, res) => {
    const schema = { type: 'object', properties: { url: { type: 'string', maxLength: 200 } } };
    const validate = ajv.compile(schema);
    res.end(`${validate({ url: req.url })}\n`);
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
