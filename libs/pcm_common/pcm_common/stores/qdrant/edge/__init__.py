"""The Qdrant Edge adapter (the embedded default) and its in-process helpers: the dense
mirror, the payload cache, the point owners and the HNSW build in a child process."""
