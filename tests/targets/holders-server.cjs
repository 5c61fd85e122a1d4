// A CommonJS server that leaks into a property of globalThis.
//   node tests/targets/holders-server.cjs PORT
const { createServer } = require('node:http');

const port = Number(process.argv[2]);
globalThis.auditLog = [];

createServer((req, res) => {
  if (req.url === '/global') globalThis.auditLog.push({ entry: `${req.method} ${req.url} ${Date.now()}` });
  res.writeHead(req.url === '/global' ? 200 : 404, { 'content-length': 2 });
  res.end('ok');
}).listen(port, '127.0.0.1', () => console.log(`holders-server.cjs on ${port}`));
