'use strict';
// checkFunction: `leakcheck fn` from a test runner. A module's export
// ({ module, export }) is loaded by leakcheck's harness in a process of
// its own; a function defined in the test file itself is reached by
// loading the test file in that process (the runner's `test`, `describe`
// and `expect` replaced by stand-ins that run the bodies), where this
// same call registers the function instead of checking it.
const { pathToFileURL, fileURLToPath } = require('node:url');
const path = require('node:path');
const { runLeakcheck, runError } = require('./spawn.cjs');

/** Set in the process leakcheck's harness runs a test file in. */
const CLOSURE_KEY = process.env.LEAKCHECK_FN_CLOSURE;
const CLOSURES = Symbol.for('leakcheck.closures');

/** Options of checkFunction and their `leakcheck fn` flags. */
const FLAGS = [
  ['cycles', '--cycles'], ['calls', '--calls'], ['maxCalls', '--max-calls'],
  ['concurrency', '-c'], ['timeout', '--timeout'], ['resolution', '--resolution'],
  ['maxRetained', '--max-retained'], ['setup', '--setup'], ['teardown', '--teardown'],
  ['snapshots', '--snapshots'],
];
const SWITCHES = ['diagnose', 'quiet', 'allowLeak', 'nodeFlags'];

/** file:line of the first caller outside this package: the line, not
 * the column, because a runner's transform (Vitest's) keeps lines but
 * moves columns between the run and the harness's import. */
function callSite() {
  const here = __dirname;
  for (const line of new Error().stack.split('\n').slice(1)) {
    const found = /\(?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(line.trim());
    if (!found) continue;
    const file = found[1].startsWith('file://') ? fileURLToPath(found[1]) : found[1];
    if (file.startsWith(here + path.sep)) continue;
    return { file, key: `${file}:${found[2]}` };
  }
  throw new Error('checkFunction: cannot tell which file called it (no file in the stack)');
}

function fnArgs(target, options, site) {
  for (const name of Object.keys(options)) {
    if (!FLAGS.some(([known]) => known === name) && !SWITCHES.includes(name)) {
      throw new TypeError(`checkFunction: unknown option ${JSON.stringify(name)} (known: ${[...FLAGS.map(([n]) => n), ...SWITCHES].join(', ')})`);
    }
  }
  const spec = typeof target === 'function'
    ? `${site.file}#default`
    : `${target.module}#${target.export ?? 'default'}`;
  const args = ['fn', spec, '--json', '-'];
  for (const [option, flag] of FLAGS) {
    if (options[option] !== undefined && options[option] !== null) args.push(flag, String(options[option]));
  }
  if (options.diagnose === false) args.push('--no-diagnose');
  if (options.quiet !== false) args.push('-q');
  const nodeFlags = [...(options.nodeFlags ?? [])];
  if (typeof target === 'function') {
    // The test runner's API, replaced where the test file is loaded.
    nodeFlags.push('--import', pathToFileURL(path.join(__dirname, 'runner-stand-ins.mjs')).href);
  }
  if (nodeFlags.length > 0) args.push('--', ...nodeFlags);
  return args;
}

/** "holder `cache` (closure or module variable, lru.mjs): 0.44 KB kept per call …" */
function leakMessage(result) {
  const route = result.routes?.[0];
  const verdict = route?.verdict;
  const holder = route?.diagnosis?.holders?.[0];
  const held = holder ? ` Held by \`${holder.name}\` (${holder.kind}${holder.script ? `, ${holder.script}` : ''}).` : '';
  return `leakcheck: ${route?.route}: ${verdict?.kind}: ${verdict?.summary}.${held} What to do: ${verdict?.action}`;
}

/**
 * Checks a function for leaks: `fn` (a function of the calling test file)
 * or `{ module, export }`. Resolves with the result; rejects on a leak
 * (the holder in the message, unless `allowLeak`), and on an error or an
 * inconclusive check (exit 2) with its reason and the partial result.
 */
function checkFunction(target, options = {}) {
  if (typeof target !== 'function' && !(target && typeof target.module === 'string')) {
    return Promise.reject(new TypeError('checkFunction: give a function, or { module, export }'));
  }
  let site;
  if (typeof target === 'function') {
    try {
      site = callSite();
    } catch (error) {
      return Promise.reject(error);
    }
    if (CLOSURE_KEY !== undefined) {
      // In leakcheck's harness: hand the function over, and wait there.
      (globalThis[CLOSURES] ??= new Map()).set(site.key, target);
      return new Promise(() => {});
    }
  }
  return checkOutside(target, options, site);
}

async function checkOutside(target, options, site) {
  const args = fnArgs(target, options, site);
  const env = { ...process.env };
  if (site) env.LEAKCHECK_FN_CLOSURE = site.key;
  const run = await runLeakcheck(args, { env });
  if (run.code === 0 && run.result) return run.result;
  if (run.code === 1 && run.result) {
    if (options.allowLeak) return run.result;
    const error = new Error(leakMessage(run.result));
    error.result = run.result;
    throw error;
  }
  throw runError(run);
}

module.exports = { checkFunction, fnArgs };
