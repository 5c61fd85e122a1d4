// leakcheck's function harness (`leakcheck fn`): loads the module under
// check in this process and calls its export when leakcheck asks, through
// the inspector. Nothing here keeps what a call returns or throws beyond
// a few distinct error messages, so that a clean function reads clean.
//
// Environment: LEAKCHECK_FN_MODULE (a path or a package), LEAKCHECK_FN_EXPORT,
// LEAKCHECK_FN_SETUP and LEAKCHECK_FN_TEARDOWN (optional export names).
// LEAKCHECK_FN_CLOSURE: instead of an export, the function a test file
// handed to the JS API's checkFunction at that call site (file:line):
// importing the test module runs that call, which, in this process,
// registers its function under the key rather than checking it.
import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';

const env = process.env;
const spec = env.LEAKCHECK_FN_MODULE;
const local = spec.startsWith('.') || isAbsolute(spec) || /\.[cm]?[jt]sx?$/.test(spec);
const url = local ? pathToFileURL(resolve(spec)).href : spec;
/** Distinct error messages kept per batch, to be shown. */
const KEPT_ERRORS = 5;
/** Calls between two turns of the event loop: timers (the per-call
 * timeout) and the inspector get their turn even if every call is sync. */
const YIELD_EVERY = 64;

// A function serves no HTTP: the served-requests counter leakcheck reads
// in servers does not apply here (null, not 0 of every call).
// Deno and Bun load leakcheck's served counter first, which stays unset.
if (!globalThis[Symbol.for('leakcheck.served')]) {
  Object.defineProperty(globalThis, Symbol.for('leakcheck.served'), { value: { n: -1 } });
}

let fn;
let setupResult;
let teardown;

function pick(mod, name) {
  const found = name === 'default'
    ? (mod.default?.default ?? mod.default)
    : (mod[name] ?? mod.default?.[name]);
  if (typeof found !== 'function') {
    const exported = Object.keys(mod).filter((k) => k !== 'default');
    const error = new Error(`${spec} has no exported function \`${name}\` (it exports: ${exported.join(', ') || 'nothing by name'})`);
    error.ours = true;
    throw error;
  }
  return found;
}

/** Functions registered by checkFunction in this process, by call site. */
const CLOSURES = Symbol.for('leakcheck.closures');

async function registered(key) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = globalThis[CLOSURES]?.get(key);
    if (found) return found;
    if (Date.now() > deadline) {
      const seen = [...(globalThis[CLOSURES]?.keys() ?? [])];
      throw new Error(`importing ${spec} never reached checkFunction at ${key} (reached: ${seen.join(', ') || 'none'})`);
    }
    await new Promise((done) => setTimeout(done, 20));
  }
}

const message = (error) => (error instanceof Error ? `${error.name}: ${error.message}` : `threw ${String(error)}`);

globalThis.__leakcheckReady = (async () => {
  try {
    const mod = await import(url);
    fn = env.LEAKCHECK_FN_CLOSURE
      ? await registered(env.LEAKCHECK_FN_CLOSURE)
      : pick(mod, env.LEAKCHECK_FN_EXPORT || 'default');
    if (env.LEAKCHECK_FN_TEARDOWN) teardown = pick(mod, env.LEAKCHECK_FN_TEARDOWN);
    if (env.LEAKCHECK_FN_SETUP) setupResult = await pick(mod, env.LEAKCHECK_FN_SETUP)();
    return { ok: true };
  } catch (error) {
    // Our own words alone; the module's errors with their stack, which
    // says where in it.
    return { ok: false, error: error?.ours ? error.message : (error?.stack ?? String(error)) };
  }
})();

/** Calls `fn` `count` times, `concurrency` at once, each within `timeoutMs`;
 * no call starts once `budgetMs` has passed (the cycle's time target: a
 * function that slows as it leaks still ends its cycle in time). */
async function run(count, concurrency, timeoutMs, budgetMs = Infinity) {
  let started = 0;
  let ok = 0;
  let failed = 0;
  let timedOut = 0;
  const errors = [];
  const begin = performance.now();
  const once = async () => {
    const returned = fn(setupResult);
    // A function that returned is done: only a promise can keep waiting,
    // and only it gets a timer (a timer per call costs more than most
    // functions checked).
    if (!returned || typeof returned.then !== 'function') return;
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([returned, limit]);
    } finally {
      clearTimeout(timer);
    }
  };
  const lane = async () => {
    while (started < count && performance.now() - begin < budgetMs) {
      started += 1;
      try {
        await once();
        ok += 1;
      } catch (error) {
        failed += 1;
        const text = message(error);
        if (text.startsWith('Error: no answer within')) timedOut += 1;
        if (errors.length < KEPT_ERRORS && !errors.includes(text)) errors.push(text);
      }
      if (started % YIELD_EVERY === 0) await new Promise((done) => setImmediate(done));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
  const timeBound = started < count;
  return { ok, failed, timedOut, errors, timeBound, seconds: (performance.now() - begin) / 1000 };
}

globalThis.__leakcheck = {
  run,
  async teardown() {
    if (teardown) await teardown(setupResult);
    return true;
  },
};

// Stay up until leakcheck stops this process.
setInterval(() => {}, 1 << 30);
