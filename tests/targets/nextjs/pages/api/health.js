// An API route of the pages router: found in the build's manifests.
export default function handler(req, res) {
  res.status(200).json({ up: true });
}
