// Express 4: the handler registers a middleware on every request, so the
// app's middleware stack (app._router.stack) keeps one Layer per request
// and every later request walks them all. FIXED=1 registers it once, at
// start-up: the clean twin.
const express = require('express');

const app = express();
if (process.env.FIXED) app.use((req, res, next) => next());
app.get('/', (req, res) => {
  if (!process.env.FIXED) app.use((req, res, next) => next());
  res.send('ok');
});
app.listen(Number(process.argv[2]), '127.0.0.1');
