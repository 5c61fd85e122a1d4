// Loaded (`--import`) in the process where leakcheck's harness imports a
// test file to reach a function checkFunction was given: `node:test`,
// `vitest` and `@jest/globals` (and Jest's globals) become stand-ins that
// run each test's body, so the call to checkFunction in it is reached; an
// assertion's failure there is ignored, nothing is reported.
import { register } from 'node:module';

const STAND_INS = new URL('./runner-api.mjs', import.meta.url).href;
register(
  `data:text/javascript,${encodeURIComponent(`
    const replaced = new Set(['node:test', 'vitest', '@jest/globals']);
    export async function resolve(specifier, context, next) {
      if (replaced.has(specifier)) return { url: ${JSON.stringify(STAND_INS)}, shortCircuit: true };
      return next(specifier, context);
    }`)}`,
);
const api = await import(STAND_INS);
for (const name of ['test', 'it', 'describe', 'suite', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach', 'expect', 'jest']) {
  globalThis[name] ??= api[name];
}
