// marked.use() changes marked's shared defaults: an extension added per
// render wraps the renderer added by the call before it, so every render
// keeps one more function and runs through all of them. FIXED=1 makes one
// `new Marked(extension)` at start-up: the clean twin.
const http = require('node:http');
const { marked, Marked } = require('marked');

const headingWithId = () => ({
  renderer: {
    heading({ tokens, depth }) {
      return `<h${depth} id="h">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
  },
});
const fixed = new Marked(headingWithId());
http
  .createServer((req, res) => {
    if (process.env.FIXED) return res.end(fixed.parse('# Title\n\ntext'));
    marked.use(headingWithId());
    res.end(marked.parse('# Title\n\ntext'));
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
