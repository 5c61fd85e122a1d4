// Serves the files of a directory on loopback, for the page tests.
//   node tests/targets/static-server.mjs PORT DIR
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';

const port = Number(process.argv[2]);
const root = process.argv[3];

createServer(async (req, res) => {
  const path = normalize(new URL(req.url, 'http://x').pathname).replace(/^(\.\.[/\\])+/, '');
  try {
    let file = path.endsWith('/') ? `${path}index.html` : path;
    // Clean URLs, as `serve` answers them: /a is a.html.
    const body = await readFile(join(root, file)).catch(() => {
      file = `${path}.html`;
      return readFile(join(root, file));
    });
    const type = file.endsWith('.js') || file.endsWith('.mjs') ? 'text/javascript'
      : file.endsWith('.map') || file.endsWith('.json') ? 'application/json'
      : 'text/html; charset=utf-8';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  } catch {
    res.writeHead(404).end('not found');
  }
}).listen(port, '127.0.0.1');
