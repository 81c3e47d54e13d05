"""Benchmarks that drive a real all-in-one PCM server over HTTP (see docs/benchmarks.md).

Run everything with ``uv run python -m bench``; each part also runs alone:
``python -m bench.locomo``, ``python -m bench.latency``, ``python -m bench.lifecycle``;
``python -m bench.recall_ab`` compares server variants' recall latency on one store.
"""
