// A server whose request handler calls into C through an FFI package from
// npm (koffi) and never frees what the C side allocated: only rss grows,
// in malloc's heap; the V8 heap, external and arrayBuffers stay flat.
//
//   node ffi-leak.mjs PORT      (koffi must resolve from this file's folder)
//
// /work keeps 2 000 bytes of malloc'd memory per request (strdup of a
// 1 999-character string); /clean makes the same call and frees it.
import http from 'node:http';
import koffi from 'koffi';

const libc = koffi.load('libc.so.6');
// strdup allocates with malloc inside the C library, as an addon's C code does.
const strdup = libc.func('void *strdup(const char *s)');
const free = libc.func('void free(void *p)');
const RECORD = 'x'.repeat(1999);

function resizeImage(record) {
  return strdup(record);
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/work')) {
    resizeImage(RECORD); // never freed
  } else if (req.url.startsWith('/clean')) {
    free(resizeImage(RECORD));
  }
  res.end('ok');
});
server.listen(Number(process.argv[2] || 9760), '127.0.0.1');
