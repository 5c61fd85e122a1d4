// RxJS: each request subscribes to a long-lived Subject (config updates)
// and never unsubscribes, so subject.observers keeps one Subscriber, and
// what its callback closes over, per request. FIXED=1 takes one value
// (first()), which ends the subscription: the clean twin.
const http = require('node:http');
const { BehaviorSubject, first } = require('rxjs');

const config$ = new BehaviorSubject({ theme: 'dark' });
http
  .createServer((req, res) => {
    const context = { url: req.url, headers: { ...req.headers } };
    const source = process.env.FIXED ? config$.pipe(first()) : config$;
    source.subscribe((config) => {
      context.theme = config.theme;
    });
    res.end('ok');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
