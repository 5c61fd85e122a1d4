# Shared by the bench scripts (source it after setting `here`): a free
# loopback port, waiting for a listener, the median of numbers on stdin,
# millisecond wall times (`seconds_since`),
# and `bench_start`: a scratch directory `$work`, the processes in `pids`
# stopped at exit, and the release build in `$leakcheck`; `start_nginx
# PORT SERVER_BODY`: nginx with one worker in `$work/nginx`, serving the
# `server { … }` body given, waited for.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do sleep 0.05; done; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# seconds_since START: seconds (to the millisecond) since START, a value of
# bash's $EPOCHREALTIME (/usr/bin/time's %e has only hundredths).
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f\n", b - a}'; }
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
bench_start() {
  work=$(mktemp -d)
  pids=()
  trap cleanup EXIT
  (cd "$here/.." && cargo build --release -q)
  leakcheck="$here/../target/release/leakcheck"
}
start_nginx() {
  local port=$1 server=$2
  mkdir -p "$work/nginx/html" "$work/nginx/logs"
  cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
error_log $work/nginx/logs/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  default_type application/json;
  server { listen 127.0.0.1:$port; $server }
}
CONF
  nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" & pids+=($!)
  wait_port "$port"
}
# routes_app COUNT: an Express 4 app with COUNT routes in $work/app.cjs
# (/r0 … /rN-2 with an id keep nothing; /leaky/:id keeps 1.5 KB a
# request), express installed beside it; started as `node app.cjs PORT`.
routes_app() {
  local count=$1
  (cd "$work" && npm init -y >/dev/null && npm i -q --no-audit --no-fund express@4 >/dev/null 2>&1)
  cat >"$work/app.cjs" <<JS
// $count routes: /r0 … /r$((count - 2)) (with an id) keep nothing; /leaky/:id keeps 1.5 KB.
const express = require('express');
const app = express();
const kept = new Map();
for (let i = 0; i < $count - 1; i++) {
  app.get('/r' + i + '/:id', (req, res) => res.json({ route: i, id: req.params.id, at: Date.now() }));
}
app.get('/leaky/:id', (req, res) => { kept.set(req.params.id, 'x'.repeat(1500)); res.json({ n: kept.size }); });
app.listen(Number(process.argv[2]), '127.0.0.1');
JS
}
