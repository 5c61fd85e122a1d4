// A route that renders a server-side DOM per request and closes it:
// nothing kept, real work (issue 60's heavy clean route; cycles of 2 500
// requests took 33–138 s there). jsdom comes from the tests' own install
// of the known-leak targets (NODE_PATH=target/tmp/known/node_modules).
//   node bench/dom-closed.cjs PORT
const http = require('node:http');
const { JSDOM } = require('jsdom');

const rows = Array.from({ length: 200 }, (_, i) => `<li class="row">item ${i}</li>`).join('');
http
  .createServer((req, res) => {
    const dom = new JSDOM(`<body><h1>${req.url}</h1><ul>${rows}</ul></body>`);
    const count = dom.window.document.querySelectorAll('li.row').length;
    dom.window.close();
    res.end(`${count}\n`);
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
