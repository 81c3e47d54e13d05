"""The local judge's token features of a memory, kept in its payload (`FEATURES_FIELD`).

Every judgement compares a memory with up to 12 earlier ones, which may lie anywhere in the
tenant. The judge caches its parses (32k texts), but past that size family members were
parsed again and again (docs/decisions/0028-judge-token-features.md). A judged memory
therefore stores the tokens the rules read; a later judgement takes its family members'
tokens from their payloads and parses only those that have none (judged before this
field existed, or not judged yet).

The stored form is JSON, one string (a single payload value is cheap to read back), tagged
with `VERSION`: a change to what `Tok` holds or how a parse becomes tokens must bump it, so
older features are ignored and those texts parsed again.
"""

from __future__ import annotations

import json

from pcm_common.domain.surprisal import Tok

FEATURES_FIELD = "judge_toks"
VERSION = 2
# The judge parses this many leading characters of a text.
PARSED_CHARS = 2000


def encode(toks: list[Tok]) -> str:
    rows = [
        [
            t.text,
            t.lemma,
            t.pos,
            t.sent,
            int(t.is_stop) | int(t.is_num) << 1 | int(t.is_time) << 2 | int(t.is_name) << 3,
            t.role,
            t.head,
        ]
        for t in toks
    ]
    return json.dumps({"v": VERSION, "toks": rows}, ensure_ascii=False, separators=(",", ":"))


def decode(stored: object, text: str) -> list[Tok] | None:
    """The tokens stored for `text`, or None when they are missing, of another version,
    malformed, or not a tokenization of `text` (its non-space characters, in order)."""
    if not isinstance(stored, str):
        return None
    try:
        data = json.loads(stored)
        if not isinstance(data, dict) or data.get("v") != VERSION:
            return None
        toks = [
            Tok(
                text=str(w),
                lemma=str(lemma),
                pos=str(pos),
                sent=int(sent),
                is_stop=bool(flags & 1),
                is_num=bool(flags & 2),
                is_time=bool(flags & 4),
                is_name=bool(flags & 8),
                role=str(role),
                head=str(head),
            )
            for w, lemma, pos, sent, flags, role, head in data["toks"]
        ]
    except (ValueError, TypeError, KeyError):
        return None
    if "".join("".join(t.text for t in toks).split()) != "".join(text[:PARSED_CHARS].split()):
        return None  # stale (the text changed) or not this text's
    return toks
