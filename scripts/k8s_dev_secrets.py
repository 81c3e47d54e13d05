"""Write deploy/k8s/overlays/dev/secrets.env with fresh random keys and passwords, once.

The dev overlay's secretGenerator reads that file (git ignores it); nothing in the
repository works as a key. An existing file is kept: Neo4j fixes its password at first
start, so new values would lock PCM out of a running install. Prints the API key.

    uv run python scripts/k8s_dev_secrets.py [--tenant NAME] [--path FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "deploy/k8s/overlays/dev/secrets.env"


def secrets_env(tenant: str) -> tuple[str, str]:
    """(file content, the API key). Hex only: REDIS_PASSWORD goes into a URL unescaped."""
    api_key = f"pcm-{secrets.token_urlsafe(32)}"
    lines = [
        f"PCM_API_KEYS={json.dumps({api_key: tenant})}",
        f"REDIS_PASSWORD={secrets.token_hex(24)}",
        f"QDRANT_API_KEY={secrets.token_hex(24)}",
        f"NEO4J_PASSWORD={secrets.token_hex(24)}",
    ]
    return "\n".join(lines) + "\n", api_key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenant", default="default", help="tenant of the API key")
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    args = parser.parse_args(argv)
    if args.path.exists():
        print(f"{args.path} exists; kept (delete it first for new values)", file=sys.stderr)
        return 0
    content, api_key = secrets_env(args.tenant)
    args.path.parent.mkdir(parents=True, exist_ok=True)
    # Owner-only from the first byte: the file holds every credential of the install.
    with open(args.path, "x", encoding="utf-8", opener=_private) as out:
        out.write(content)
    print(f"wrote {args.path}; API key (tenant {args.tenant!r}): {api_key}")
    return 0


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


if __name__ == "__main__":
    raise SystemExit(main())
