// debug-js/debug#678: from 3.0.0 to 4.2.x, every `debug(namespace)` call
// was kept in `createDebug.instances` (so that `enable()` could reach it):
// a logger made per request is never freed. debug 4.3.0 stopped keeping
// them (#740).
const http = require('node:http');
const debug = require(process.env.DEBUG_PACKAGE || 'debug');

http
  .createServer((req, res) => {
    const log = debug(`shop:request:${req.url}`);
    log('serving %s', req.url);
    res.end('ok\n');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
