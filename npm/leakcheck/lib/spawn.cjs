'use strict';
// One run of the leakcheck binary with `--json -`, shared by `check` and
// `checkFunction`: its exit, its parsed result, and the error a failed
// run (exit 2, or no result) is reported with.
const { spawn } = require('node:child_process');
const { findBinary } = require('./binary.cjs');

/**
 * Runs `leakcheck ARGS`; resolves with { code, signal, result, stderr }
 * (`result` undefined when stdout held no JSON). `echo` copies the
 * binary's stderr to this process's as it comes.
 */
function runLeakcheck(args, { env = process.env, echo = false } = {}) {
  return new Promise((resolve, reject) => {
    let binary;
    try {
      binary = findBinary();
    } catch (error) {
      reject(error);
      return;
    }
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const out = [];
    let stderr = '';
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (echo) process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      let result;
      try {
        result = JSON.parse(Buffer.concat(out).toString('utf8'));
      } catch {
        result = undefined;
      }
      resolve({ code, signal, result, stderr });
    });
  });
}

/** The error of a run that did not finish with a result: its `error:`
 * and `inconclusive:` lines, `exitCode` and the partial `result` attached. */
function runError({ code, signal, result, stderr }) {
  const lines = stderr.split('\n').filter((l) => l.startsWith('error:') || l.startsWith('inconclusive:'));
  const error = new Error(lines.length > 0 ? lines.join('\n') : `leakcheck exited with ${code ?? signal}`);
  error.exitCode = code;
  error.result = result;
  return error;
}

module.exports = { runLeakcheck, runError };
