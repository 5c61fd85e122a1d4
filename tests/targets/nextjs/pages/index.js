// getServerSideProps memoises every request's props in a module-level Map
// keyed by ?id: one entry per id (about 2 KB: forty items), never evicted
// (the leak the test names; with eight items, 0.3 KB a request, Node 26's
// noisier heap left it to rss, and the verdict read off-heap).
const propsCache = new Map();

export async function getServerSideProps({ query }) {
  const id = String(query.id ?? '0');
  let props = propsCache.get(id);
  if (!props) {
    props = { id, rendered: new Date().toISOString(), items: Array.from({ length: 40 }, (_, i) => `item-${id}-${i}`) };
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
