// winston: a logger created per request around one shared transport. Each
// logger pipes into the transport, and a pipe registers its listeners on
// the destination, so the transport keeps every logger (and what its
// defaultMeta holds) for the life of the process. FIXED=1 makes one logger
// at start-up and a child per request: the clean twin.
const http = require('node:http');
const winston = require('winston');

const transport = new winston.transports.Stream({ stream: require('node:fs').createWriteStream('/dev/null') });
const root = winston.createLogger({ transports: [transport] });
http
  .createServer((req, res) => {
    const meta = { url: req.url, headers: { ...req.headers } };
    const logger = process.env.FIXED
      ? root.child(meta)
      : winston.createLogger({ transports: [transport], defaultMeta: meta });
    logger.info('served');
    res.end('ok');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
