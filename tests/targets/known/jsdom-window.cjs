// A jsdom window rendered per request and never closed: a page's own timer
// (here a setInterval, as analytics snippets have) keeps the whole window
// alive. Call `dom.window.close()` when done with it.
const http = require('node:http');
const { JSDOM } = require('jsdom');

http
  .createServer((req, res) => {
    const dom = new JSDOM(
      `<body><p id="t">${req.url}</p><script>setInterval(() => {}, 60000)</script></body>`,
      { runScripts: 'dangerously' },
    );
    res.end(dom.window.document.getElementById('t').textContent + '\n');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
