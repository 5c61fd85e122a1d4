// An axios interceptor registered per request on a shared instance: its
// InterceptorManager keeps every handler (and what it closes over) until
// `eject(id)`. Register interceptors once, when the instance is made.
const http = require('node:http');
const axios = require('axios');

const api = axios.create({ baseURL: 'http://127.0.0.1:1' });

http
  .createServer((req, res) => {
    const user = { url: req.url, token: 'x'.repeat(120) };
    api.interceptors.request.use((config) => {
      config.headers['x-user'] = user.url;
      return config;
    });
    res.end('ok\n');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
