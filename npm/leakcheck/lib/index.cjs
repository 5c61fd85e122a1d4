'use strict';
// The JS API: run a check from a test runner or a script.
//   const { check, assertNoLeak } = require('leakcheck');
//   const result = await check({ url, routes: ['/users'], command: ['node', 'server.js'] });
//   assertNoLeak(result, { maxRetainedPerRequest: 64 });
const { AssertionError } = require('node:assert');
const { findBinary } = require('./binary.cjs');
const { runLeakcheck, runError } = require('./spawn.cjs');

/** Options that take a value, and their flag; an array repeats the flag. */
const VALUE_FLAGS = [
  ['routes', '--route'], ['cycles', '--cycles'], ['requests', '-a'], ['connections', '-c'],
  ['method', '-m'], ['headers', '-H'], ['body', '-b'], ['scenario', '--scenario'],
  ['abort', '--abort'], ['loadCmd', '--load-cmd'], ['maxRetained', '--max-retained'],
  ['resolution', '--resolution'], ['heapLimit', '--heap-limit'], ['memoryLimit', '--memory-limit'],
  ['maxPeak', '--max-peak'],
  ['timeout', '--timeout'], ['counters', '--counter'], ['html', '--html'],
  ['markdown', '--markdown'], ['baseline', '--baseline'], ['snapshots', '--snapshots'],
  ['inspect', '--inspect'], ['pid', '--pid'],
];

/** Options that are switches or lists of their own, and their types. */
const OTHER_OPTIONS = { url: 'string', diagnose: 'boolean', fresh: 'boolean', quiet: 'boolean', args: 'string[]', command: 'string[]' };
/** What each value option takes: a list where the flag repeats. */
const LISTS = new Set(['routes', 'headers', 'counters']);
const KNOWN = [...VALUE_FLAGS.map(([name]) => name), ...Object.keys(OTHER_OPTIONS)];

/** Edit distance, to name the option a misspelt one meant. */
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** Refuses unknown names (with the closest known one) and wrong types. */
function checkOptions(options) {
  if (!options || typeof options !== 'object') throw new TypeError('check: give an options object, e.g. { url, routes, command }');
  for (const [name, value] of Object.entries(options)) {
    if (!KNOWN.includes(name)) {
      const closest = [...KNOWN].sort((a, b) => distance(name, a) - distance(name, b))[0];
      throw new TypeError(`check: unknown option ${JSON.stringify(name)}; did you mean ${JSON.stringify(closest)}? (known: ${KNOWN.join(', ')})`);
    }
    if (value === undefined || value === null) continue;
    const kind = OTHER_OPTIONS[name];
    const isStrings = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string');
    const ok = kind === 'string[]' ? isStrings(value)
      : kind ? typeof value === kind
      : LISTS.has(name) ? typeof value === 'string' || isStrings(value)
      : typeof value === 'string' || typeof value === 'number';
    if (!ok) {
      const want = kind === 'string[]' ? 'an array of strings (one argument each)'
        : kind ? `a ${kind}`
        : LISTS.has(name) ? 'a string or an array of strings' : 'a string or a number';
      throw new TypeError(`check: options.${name} must be ${want}, not ${Array.isArray(value) ? 'an array' : typeof value}`);
    }
  }
  if (!options.url) throw new TypeError('check: give options.url, the base URL the server listens on');
}

/** The command line of `leakcheck run` for `options`. */
function runArgs(options) {
  checkOptions(options);
  const args = ['run', '--url', options.url, '--json', '-'];
  for (const [option, flag] of VALUE_FLAGS) {
    const value = options[option];
    if (value === undefined || value === null) continue;
    for (const each of Array.isArray(value) ? value : [value]) args.push(flag, String(each));
  }
  if (options.diagnose === false) args.push('--no-diagnose');
  if (options.fresh === false) args.push('--no-fresh');
  if (options.quiet) args.push('-q');
  args.push(...(options.args ?? []));
  if (options.command && options.command.length > 0) args.push('--', ...options.command);
  return args;
}

/**
 * Runs `leakcheck run` and resolves with its result. A leak resolves too
 * (the result says so); exit 2 (an error, or an inconclusive verdict)
 * rejects with the message, `exitCode` and the partial `result` attached.
 */
async function check(options) {
  const args = runArgs(options);
  const run = await runLeakcheck(args, { echo: !options.quiet });
  if ((run.code === 0 || run.code === 1) && run.result) return run.result;
  throw runError(run);
}

/**
 * Throws an AssertionError when a route of `result` keeps memory beyond
 * `maxRetainedPerRequest` bytes per unit (default: any leak verdict). The
 * message is the verdict, the holder and what to do.
 */
function assertNoLeak(result, { maxRetainedPerRequest } = {}) {
  const failures = [];
  for (const route of result.routes ?? []) {
    const verdict = route.verdict;
    if (!verdict) continue;
    const over = maxRetainedPerRequest === undefined
      ? verdict.leak
      : ['retention', 'off-heap-retention'].includes(verdict.kind) && verdict.figure.bytes_per_request > maxRetainedPerRequest;
    // A target that died of its leak fails whatever the threshold.
    const dead = verdict.kind === 'memory-exhausted';
    if (!over && !dead && !(verdict.leak && verdict.kind === 'counter-growth')) continue;
    const holder = route.diagnosis?.holders?.[0];
    const held = holder ? ` Held by \`${holder.name}\` (${holder.kind}${holder.script ? `, ${holder.script}` : ''}).` : '';
    failures.push(`${route.route}: ${verdict.kind}: ${verdict.summary}.${held} What to do: ${verdict.action}`);
  }
  if (failures.length > 0) {
    throw new AssertionError({ message: `leakcheck: ${failures.join('\n')}`, actual: result, operator: 'assertNoLeak' });
  }
}

const { checkFunction } = require('./function.cjs');

module.exports = { check, assertNoLeak, runArgs, findBinary, checkFunction };
