// Koa: the first middleware calls app.use() on every request, so
// app.middleware keeps one function per request, and koa-compose, which
// walks that same array, runs them all on every later request. FIXED=1
// registers it once: the clean twin.
const Koa = require('koa');

const app = new Koa();
const timing = async (ctx, next) => next();
if (process.env.FIXED) app.use(timing);
app.use(async (ctx) => {
  if (!process.env.FIXED) {
    // What the added middleware closes over stays with it.
    const seen = { url: ctx.url, at: Date.now(), headers: { ...ctx.headers } };
    app.use(async (c, next) => {
      c.state.firstSeen ??= seen.at;
      return next();
    });
  }
  ctx.body = 'ok';
});
app.listen(Number(process.argv[2]), '127.0.0.1');
