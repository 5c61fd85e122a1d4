// Writes heap snapshots of about the given sizes (file size, MB) from one
// growing heap of records, strings, arrays and maps, so that a pair shares
// node ids like two snapshots of a leaking server.
//   node --max-old-space-size=16000 bench/make-snapshot.mjs OUT1 MB1 [OUT2 MB2 ...]
import { writeHeapSnapshot } from 'node:v8';
import { statSync } from 'node:fs';

// Measured here: one record below costs about 195 bytes of snapshot text,
// on top of about 4.5 MB for an empty Node process.
const BYTES_PER_RECORD = 195;
const BASE_BYTES = 4.5e6;
const records = [];
const index = new Map();
globalThis.benchRecords = records;
globalThis.benchIndex = index;

function grow(to) {
  for (let i = records.length; i < to; i++) {
    const record = { id: i, name: `user-${i}`, tags: i % 7 === 0 ? ['a', 'b'] : null };
    records.push(record);
    if (i % 10 === 0) index.set(record.name, record);
  }
}

const args = process.argv.slice(2);
for (let i = 0; i + 1 < args.length; i += 2) {
  const [out, mb] = [args[i], Number(args[i + 1])];
  grow(Math.max(0, Math.round((mb * 1e6 - BASE_BYTES) / BYTES_PER_RECORD)));
  writeHeapSnapshot(out);
  console.log(`${out}: ${(statSync(out).size / 1e6).toFixed(1)} MB, ${records.length} records`);
}
