// A coding agent's side of `leakcheck mcp`, with the official TypeScript
// SDK: connect over stdio, list the tools, and run the calls the scenario
// names; print one JSON line per step for tests/it/mcp.rs to assert on. The
// SDK's client validates every response against the protocol's schemas,
// so a malformed answer fails the step.
//   node client.mjs LEAKCHECK SCENARIO.json
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [leakcheck, scenarioFile] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(scenarioFile, 'utf8'));
const say = (step) => console.log(JSON.stringify(step));

const transport = new StdioClientTransport({
  command: leakcheck,
  args: ['mcp', ...(scenario.serverArgs ?? [])],
  stderr: 'inherit',
});
const client = new Client({ name: 'leakcheck-test-agent', version: '1.0.0' });
await client.connect(transport);
say({ step: 'initialize', server: client.getServerVersion() });

const { tools } = await client.listTools();
say({ step: 'list', tools: tools.map((t) => ({ name: t.name, properties: Object.keys(t.inputSchema.properties ?? {}) })) });

for (const call of scenario.calls) {
  const progress = [];
  const controller = new AbortController();
  const options = {
    signal: controller.signal,
    timeout: 300_000,
    onprogress: (p) => {
      progress.push(p.message);
      if (call.cancelAfter && progress.some((m) => m?.includes(call.cancelAfter))) controller.abort('the test cancels');
    },
  };
  try {
    const result = await client.callTool({ name: call.name, arguments: call.arguments }, undefined, options);
    say({ step: call.name, label: call.label, isError: result.isError ?? false, structured: result.structuredContent, text: result.content?.[0]?.text, progress: progress.length });
  } catch (error) {
    say({ step: call.name, label: call.label, thrown: String(error?.message ?? error), progress: progress.length });
  }
}
await client.close();
