// Targets that run out of memory, and their twins. node memory-server.mjs PORT
//   /document         keeps a server-rendered document per request (~600 KB of
//                     objects), with a page timer never cleared: the jsdom
//                     or SSR window left open
//   /document-closed  renders the same document and lets it go (the fixed twin)
//   /big              keeps 2 MB of objects per request (dies fast under a small heap)
//   /buffer           keeps a 256 KB Buffer per request (off-heap)
//   /slow             ~15 ms of rendering per request, nothing kept (a heavy
//                     clean route: jsdom-like work)
//   /huge             one request needs ~300 MB of objects, kept for nothing
//   /heavy            allocates ~20 MB per request and holds it across a
//                     short wait, then lets it go: clean, but a high peak
import http from 'node:http';

const port = Number(process.argv[2] ?? 9760);
const documents = [];
const buffers = [];
let served = 0;

// A document of 1 800 element objects, ~340 B each with their text: ~600 KB.
function render(id, elements = 1800) {
  const body = { tag: 'body', id, children: [] };
  for (let i = 0; i < elements; i++) {
    body.children.push({ tag: 'div', id: `${id}-${i}`, text: `row ${i} of document ${id}: ${'-'.repeat(64)}` });
  }
  return body;
}

function keepDocument(id) {
  const window = { document: render(id), listeners: [] };
  window.timer = setInterval(() => window.document.children.length, 3_600_000);
  documents.push(window);
}

const server = http.createServer((req, res) => {
  served += 1;
  const url = req.url ?? '/';
  if (url.startsWith('/document-closed')) {
    const doc = render(served);
    res.end(`rendered ${doc.children.length}`);
  } else if (url.startsWith('/document')) {
    keepDocument(served);
    res.end('rendered');
  } else if (url.startsWith('/big')) {
    documents.push(render(served, 10_000));
    res.end('kept');
  } else if (url.startsWith('/buffer')) {
    buffers.push(Buffer.alloc(256 * 1024, served & 0xff));
    res.end('buffered');
  } else if (url.startsWith('/slow')) {
    const until = performance.now() + 15;
    let rendered = 0;
    while (performance.now() < until) rendered += render(served, 300).children.length;
    res.end(`slow ${rendered}`);
  } else if (url.startsWith('/huge')) {
    res.end(`huge ${render(served, 1_000_000).children.length}`);
  } else if (url.startsWith('/heavy')) {
    const scratch = [];
    for (let i = 0; i < 100; i++) scratch.push(Buffer.alloc(200 * 1024, i));
    setTimeout(() => res.end(`heavy ${scratch.length}`), 20);
  } else {
    res.end('ok');
  }
});
server.listen(port, '127.0.0.1');
