// Server source maps, so the diagnosis maps the bundle under .next/server
// back to pages/ (Next writes none for the server by default).
module.exports = { experimental: { serverSourceMaps: true } };
