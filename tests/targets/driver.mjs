// A team's own load script, as --load-cmd runs it: LEAKCHECK_REQUESTS
// requests on LEAKCHECK_CONNECTIONS keep-alive connections to
// LEAKCHECK_URL + LEAKCHECK_ROUTE, each with a unique id; prints the count.
// DRIVER_METHOD=POST posts a small JSON body instead of a GET.
import http from 'node:http';

const base = process.env.LEAKCHECK_URL;
const route = process.env.LEAKCHECK_ROUTE;
const total = Number(process.env.LEAKCHECK_REQUESTS);
const connections = Number(process.env.LEAKCHECK_CONNECTIONS);
const cycle = process.env.LEAKCHECK_CYCLE;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const method = process.env.DRIVER_METHOD ?? 'GET';

let next = 0;
let done = 0;
const one = () =>
  new Promise((resolve, reject) => {
    const id = `${cycle}-${(next += 1)}`;
    const body = method === 'POST' ? JSON.stringify({ id, item: 'book' }) : undefined;
    const headers = body ? { 'content-type': 'application/json', 'content-length': body.length } : {};
    http
      .request(`${base}${route}?id=${id}`, { agent, method, headers }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject)
      .end(body);
  });

const worker = async () => {
  while (next < total) {
    await one();
    done += 1;
  }
};
await Promise.all(Array.from({ length: connections }, worker));
agent.destroy();
console.log(`sent ${done} requests`);
