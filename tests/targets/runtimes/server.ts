// One TypeScript server for Deno and Bun (tests/it/runtimes.rs), run
// directly by each runtime: `deno run --allow-net --allow-env server.ts`,
// `bun server.ts`. Its routes are the leak shapes the tests check:
//   /remember?id=N  a module-level cache keyed per request (a leak)
//   /bounded?id=N   the same cache capped at RECENT entries (clean)
//   /subscribe      a listener added on `process` per request (a leak)
//   /health         nothing kept

interface Session {
  id: string;
  body: string;
  seenAt: number;
}

type Handler = (request: Request) => Response;

const RECENT = 100;

const sessions = new Map<string, Session>();
const recent = new Map<string, Session>();

function session(id: string): Session {
  return { id, body: "x".repeat(200) + id, seenAt: Date.now() };
}

function remember(id: string): number {
  sessions.set(id, session(id));
  return sessions.size;
}

function rememberRecent(id: string): number {
  recent.set(id, session(id));
  if (recent.size > RECENT) {
    const oldest = recent.keys().next().value as string;
    recent.delete(oldest);
  }
  return recent.size;
}

function subscribe(id: string): number {
  process.on("leakcheck:reload", () => id.length);
  return process.listenerCount("leakcheck:reload");
}

const routes: Record<string, (id: string) => number> = {
  "/remember": remember,
  "/bounded": rememberRecent,
  "/subscribe": subscribe,
  "/health": () => 0,
};

const handle: Handler = (request) => {
  const url = new URL(request.url);
  const route = routes[url.pathname];
  if (!route) return new Response("not found", { status: 404 });
  const n = route(url.searchParams.get("id") ?? "0");
  return new Response(`ok ${n}\n`);
};

const port = Number(process.env.PORT ?? 8000);
declare const Deno: any;
declare const Bun: any;
if (typeof Deno !== "undefined") {
  Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, handle);
} else {
  Bun.serve({ hostname: "127.0.0.1", port, fetch: handle });
}
