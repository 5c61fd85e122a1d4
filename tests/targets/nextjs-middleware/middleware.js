// Fire-and-forget timeouts, as middleware starts them for logging or
// metrics: their ids are never kept and clearTimeout is never called.
// Next.js's edge sandbox tracked each id until 16.3.0 (vercel/next.js#95094);
// TIMEOUTS per request make the leak stand well above the resolution.
import { NextResponse } from 'next/server';

const TIMEOUTS = 400;

export function middleware() {
  for (let i = 0; i < TIMEOUTS; i++) setTimeout(() => {}, 0);
  return NextResponse.next();
}

export const config = { matcher: '/api/timers' };
