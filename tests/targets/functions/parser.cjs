// A clean parser (CommonJS): parses a small document per call and keeps
// nothing of it. `empty` does nothing at all: the harness's own floor.
function parse() {
  const text = JSON.stringify({ id: Math.random(), tags: ['a', 'b', 'c'], body: 'x'.repeat(200) });
  const doc = JSON.parse(text);
  return doc.tags.length + doc.body.length;
}

function empty() {}

function throws() {
  throw new TypeError('the input is not a document');
}

module.exports = { parse, empty, throws };
