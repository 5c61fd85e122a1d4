'use strict';
// Finds the leakcheck binary the same way bin/leakcheck does: LEAKCHECK_BINARY,
// or the platform package npm installed beside this one.
const fs = require('node:fs');
const path = require('node:path');

const SUPPORTED = ['linux-x64'];

function platformName() {
  const override = process.env.LEAKCHECK_PLATFORM_OVERRIDE;
  if (override) return override;
  return `${process.platform}-${process.arch}`;
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The path of the binary, or an Error whose message says what to do. */
function findBinary() {
  const fromEnv = process.env.LEAKCHECK_BINARY;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) {
      throw new Error(`leakcheck: LEAKCHECK_BINARY=${fromEnv} is not an executable file: point it at the leakcheck binary, or unset it to use the npm package's`);
    }
    return fromEnv;
  }
  const platform = platformName();
  if (!SUPPORTED.includes(platform)) {
    throw new Error(`leakcheck: no binary is published for ${platform} (packages exist for: ${SUPPORTED.join(', ')}); build it with 'cargo install --path .' from the repository and set LEAKCHECK_BINARY to it`);
  }
  let manifest;
  try {
    manifest = require.resolve(`@leakcheck/${platform}/package.json`, { paths: [__dirname] });
  } catch {
    throw new Error(`leakcheck: the package @leakcheck/${platform} is not installed (npm skips optional dependencies with --omit=optional): run 'npm install @leakcheck/${platform}', or set LEAKCHECK_BINARY`);
  }
  const binary = path.join(path.dirname(manifest), 'bin', 'leakcheck');
  if (!isExecutable(binary)) {
    throw new Error(`leakcheck: ${binary} is not executable: reinstall @leakcheck/${platform} (npm install), or chmod +x it`);
  }
  return binary;
}

module.exports = { findBinary, SUPPORTED };
