// A client that subscribes to its connection's events on every call and
// never unsubscribes: each call adds a listener (and the closure over its
// request) to a long-lived emitter.
import { EventEmitter } from 'node:events';

const connection = new EventEmitter();
connection.setMaxListeners(0);

export function subscribe() {
  const request = { at: Date.now(), body: 'r'.repeat(200) };
  connection.on('message', (message) => request.body.length + message.length);
  return request.at;
}
