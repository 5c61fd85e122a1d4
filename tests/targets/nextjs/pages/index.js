// getServerSideProps memoises every request's props in a module-level Map
// keyed by ?id: one entry per id, never evicted (the leak the test names).
const propsCache = new Map();

export async function getServerSideProps({ query }) {
  const id = String(query.id ?? '0');
  let props = propsCache.get(id);
  if (!props) {
    props = { id, rendered: new Date().toISOString(), items: Array.from({ length: 8 }, (_, i) => `item-${id}-${i}`) };
    propsCache.set(id, props);
  }
  return { props };
}

export default function Page({ id, items }) {
  return (
    <main>
      <h1>Item {id}</h1>
      <ul>{items.map((item) => <li key={item}>{item}</li>)}</ul>
    </main>
  );
}
