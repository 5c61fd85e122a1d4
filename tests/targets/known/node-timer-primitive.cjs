// nodejs/node#53335: a Timeout turned into a number (`+setTimeout(…)`,
// as Sentry 8.0–8.5 and Next.js's edge sandbox did) stays in Node's
// `knownTimersById` after it fires, with its callback and what that
// closes over. Node 20.16.0 and 22.4.0 fixed it.
const http = require('node:http');

http
  .createServer((req, res) => {
    const body = { url: req.url, at: Date.now(), padding: 'x'.repeat(200) };
    const id = +setTimeout(() => body.done = true, 1);
    res.end(`scheduled ${id}\n`);
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
