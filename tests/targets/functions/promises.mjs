// A queue that chains every job onto the last: each call's promise keeps
// the previous one, and with it every input it was given. The setup
// returns the queue every call receives.
export function setup() {
  return { tail: Promise.resolve([]) };
}

export async function enqueue(queue) {
  const input = { payload: 'p'.repeat(250) };
  queue.tail = queue.tail.then((done) => {
    done.push(input);
    return done;
  });
  await queue.tail;
}
