"""In-memory doubles of PCM's ports, shipped with the library so that service logic is
unit-tested without servers: `MemoryVectorStore` (the vector-store port, same filter and
tenancy semantics as the Qdrant adapters; a contract test holds it to Qdrant Edge),
`MemoryGraphStore` (the graph port), `TestBus` (publishing calls the registered handlers
directly), `HashEmbedder` (deterministic bag-of-words vectors) and `MemoryPorts` (all of
them as the ports services take). Redis itself is faked with `fakeredis` in the tests."""

from pcm_common.testing.bus import TestBus
from pcm_common.testing.embedder import HashEmbedder
from pcm_common.testing.graph import MemoryGraphStore
from pcm_common.testing.ports import MemoryPorts
from pcm_common.testing.vectors import MemoryVectorStore

__all__ = ["HashEmbedder", "MemoryGraphStore", "MemoryPorts", "MemoryVectorStore", "TestBus"]
