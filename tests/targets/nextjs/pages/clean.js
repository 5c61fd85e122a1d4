export async function getServerSideProps({ query }) {
  const id = String(query.id ?? '0');
  const props = { id, rendered: new Date().toISOString(), items: Array.from({ length: 8 }, (_, i) => `item-${id}-${i}`) };
  return { props };
}

export default function Clean({ id, items }) {
  return (
    <main>
      <h1>Item {id}</h1>
      <ul>{items.map((item) => <li key={item}>{item}</li>)}</ul>
    </main>
  );
}
