// A server with heavy native churn that keeps nothing: each request
// gzips 64 KB in libuv's threadpool (zlib's state and buffers are malloc'd
// off the V8 heap) and drops the result.
//
//   node zlib-churn.mjs PORT
import http from 'node:http';
import zlib from 'node:zlib';

const PAYLOAD = Buffer.from('leakcheck '.repeat(6554));

const server = http.createServer((req, res) => {
  zlib.gzip(PAYLOAD, (error, compressed) => {
    res.end(error ? 'error' : String(compressed.length));
  });
});
server.listen(Number(process.argv[2] || 9761), '127.0.0.1');
