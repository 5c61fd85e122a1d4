// A server that keeps what each request sends (its headers, its cookie and
// its body) in a list, and a session keyed by the cookie's value: the
// secrets tests/it/evidence.rs plants must not leave through the evidence
// bundle, however they are held.
const http = require('node:http');

const kept = [];
const sessions = {};

http
  .createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const cookie = (req.headers.cookie || '').replace(/^sid=/, '');
      kept.push({ headers: { ...req.headers }, body: JSON.parse(body || '{}'), at: Date.now() });
      sessions[`${cookie}${kept.length % 7}`] = { seen: kept.length };
      res.end('kept\n');
    });
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
