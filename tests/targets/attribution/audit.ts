// A TypeScript server whose audit trail keeps every request.
declare const require: (name: string) => any;
declare const process: { argv: string[] };
const http = require('node:http');

interface AuditEntry {
  at: number;
  url: string;
  agent: string;
}

const port: number = Number(process.argv[2]);
const auditTrail: AuditEntry[] = [];

function record(req: { url?: string; headers: Record<string, string> }): void {
  const entry: AuditEntry = {
    at: Date.now(),
    url: String(req.url),
    agent: String(req.headers['user-agent'] ?? 'none') + ' '.repeat(40),
  };
  auditTrail.push(entry);
}

http
  .createServer((req: any, res: any) => {
    if (req.url === '/audit') record(req);
    res.end('ok');
  })
  .listen(port, '127.0.0.1');
