// A dynamic page: route discovery reads it from the build's manifests as
// /items/[id] and fills the id (tests/it/routes.rs). Keeps nothing.
export async function getServerSideProps({ params }) {
  return { props: { id: String(params.id) } };
}

export default function Item({ id }) {
  return <main><h1>Item {id}</h1></main>;
}
