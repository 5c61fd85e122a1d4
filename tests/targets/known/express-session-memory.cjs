// express-session's default MemoryStore in production: each new visitor's
// session stays in `MemoryStore.sessions` until it expires (a day by
// default), so a server answering new clients grows without bound. Give
// the middleware a real store (Redis, a database, or memorystore's TTL).
const express = require('express');
const session = require('express-session');

const app = express();
app.use(session({ secret: 'test only', resave: false, saveUninitialized: true }));
app.get('/', (req, res) => {
  req.session.seen = (req.session.seen || 0) + 1;
  res.end('ok\n');
});
app.listen(Number(process.argv[2]), '127.0.0.1');
