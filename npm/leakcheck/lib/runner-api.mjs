// Stand-ins for a test runner's API (see runner-stand-ins.mjs): every
// test and suite body runs at once, hooks run as they are declared, and
// `expect(…)` accepts anything.
const run = (...args) => {
  const body = args.find((a) => typeof a === 'function');
  if (!body) return undefined;
  try {
    const returned = body({ skip() {}, todo() {}, diagnostic() {}, test: run, mock: anything });
    if (returned && typeof returned.catch === 'function') returned.catch(() => {});
  } catch {}
  return undefined;
};
const anything = new Proxy(function () {}, {
  get: (_, name) => (name === 'then' ? undefined : anything),
  apply: () => anything,
});
export const test = Object.assign(run, { skip() {}, todo() {}, only: run, each: () => run, concurrent: run });
export const it = test;
export const describe = Object.assign(run, { skip() {}, only: run, each: () => run });
export const suite = describe;
export const before = run;
export const after = () => {};
export const beforeAll = run;
export const afterAll = () => {};
export const beforeEach = () => {};
export const afterEach = () => {};
export const expect = anything;
export const vi = anything;
export const jest = anything;
export const mock = anything;
export default Object.assign(run, { test, it, describe, suite, before, after, beforeEach, afterEach, mock });
