// graphql-tag caches every document it parses in a module-level Map keyed
// by the query's text, and never evicts: a query whose text is built per
// request (the id interpolated into it) adds one parsed document per
// request. FIXED=1 passes the id as a variable, one document for all:
// the clean twin.
const http = require('node:http');
const gql = require('graphql-tag');

let next = 0;
http
  .createServer((req, res) => {
    const id = next++;
    const query = process.env.FIXED
      ? gql`query User($id: ID!) { user(id: $id) { id name email } }`
      : gql(`query User { user(id: "${id}") { id name email } }`);
    res.end(String(query.definitions.length));
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
