// A winston logger made per request with `handleExceptions: true` adds an
// `uncaughtException` listener to `process` each time (winston's
// ExceptionHandler), never removed: make one logger at start-up.
const http = require('node:http');
const winston = require('winston');

http
  .createServer((req, res) => {
    const logger = winston.createLogger({
      transports: [new winston.transports.Stream({ stream: devNull(), handleExceptions: true })],
    });
    logger.info('served', { url: req.url });
    res.end('ok\n');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');

function devNull() {
  const { Writable } = require('node:stream');
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}
