// A DataLoader shared by every request: its cache (`_cacheMap`) keeps each
// key ever loaded, with its value. DataLoader is made to be created per
// request; share one only with `cache: false` or a bounded `cacheMap`.
const http = require('node:http');
const DataLoader = require('dataloader');

const users = new DataLoader(async (ids) => ids.map((id) => ({ id, name: `user ${id}`, bio: 'b'.repeat(100) })));
let n = 0;

http
  .createServer(async (req, res) => {
    n += 1;
    const user = await users.load(n);
    res.end(`${user.name}\n`);
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
