// A plugin system that registers its plugin on every call instead of
// once: each call adds a hook to the shared list and then runs every hook
// registered so far, so it keeps memory and does more work than the call
// before (issue 60: such a function got no verdict in five minutes).
// `registerOnce` is the twin: the plugin is registered on the first call
// only, and every call runs the one hook.
const hooks = [];
let registered = false;

function addPlugin(id) {
  const plugin = { id, name: `plugin-${id}`, options: { enabled: true } };
  // A plugin's hook does a little work of its own, as real ones do.
  hooks.push((value) => {
    let out = value;
    for (let i = 0; i < 200; i += 1) out = (out * 31 + plugin.id + i) % 1000003;
    return out;
  });
}

function runHooks(value) {
  let out = value;
  for (const hook of hooks) out = hook(out);
  return out;
}

export function register(input = 1) {
  addPlugin(hooks.length);
  return runHooks(input);
}

export function registerOnce(input = 1) {
  if (!registered) {
    addPlugin(0);
    registered = true;
  }
  return runHooks(input);
}
