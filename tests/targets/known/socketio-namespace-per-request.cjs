// socket.io: a namespace per tenant, created while serving a request
// (`io.of('/tenant-' + id)`) to notify that tenant's sockets. socket.io
// keeps every namespace in `io._nsps` with its adapter, and there is no
// way to remove one, so each request leaves one behind. FIXED=1 uses one
// namespace and a room per tenant: the clean twin.
const http = require('node:http');
const { Server } = require('socket.io');

const server = http.createServer();
const io = new Server(server);
const tenants = io.of('/tenants');
let served = 0;
server.on('request', (req, res) => {
  // Socket.io answers its own path; every other request is the app's.
  if (req.url.startsWith('/socket.io/')) return;
  served += 1;
  const event = { url: req.url, at: Date.now() };
  if (process.env.FIXED) {
    tenants.to(`tenant-${served}`).emit('changed', event);
  } else {
    io.of(`/tenant-${served}`).emit('changed', event);
  }
  res.end('ok');
});
server.listen(Number(process.argv[2]), '127.0.0.1');
