"""Write firewall (DESIGN §4 and §6; the mnemos write-up's memory safety layer): every text
and every metadata value is screened before anything is stored, on every write path
(single, batch, PATCH).

- Secrets (`firewall.secrets`): detect-secrets' credential-shape plugins and its keyword
  detector, plus token shapes it does not know yet, authorization headers, environment
  lines, and passwords stated in prose.
- PII (`firewall.pii`): e-mail addresses; phone numbers (libphonenumber, national formats
  of the configured regions and any number written with "+"); US SSNs and ITINs; payment
  cards (Luhn); IBANs; national and tax ids of several countries (python-stdnum's
  checksums: UK NI, FR NIR, IN Aadhaar and PAN, JP My Number, DE tax id, ES DNI/NIE, IT
  codice fiscale, NL BSN, BR CPF, CN, KR, CA SIN, UK NHS); passport and licence numbers,
  SSNs without dashes and dates of birth where words before them say so; IP addresses.

Detectors read a `views.View` of the text: invisible characters (zero-width space or
joiner, soft hyphen) dropped, as ASCII, and for secrets also with a key written in groups
joined (`firewall.grouped`: "AKIA IOSF ODNN 7EXA MPLE", "AKIA-IOSF-...", unequal groups,
a key broken over lines). Every detector is linear in the text's length (RE2, bounded
windows, a budget of libphonenumber calls), so a 100 kB text is screened in milliseconds
whatever its shape.

Each category has an action: `block` (the write is refused with 422, nothing stored),
`redact` (the match is replaced by `[REDACTED_<KIND>]` and the write is reported as
`redacted`) or `allow`. Defaults: secrets block, PII redact. Findings never carry the
matched text, so an error response or a log line cannot leak what it refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from pcm_common.firewall.grouped import grouped_views
from pcm_common.firewall.pii import pii_hits
from pcm_common.firewall.secrets import SECRET_PLUGINS, Hit, secret_hits
from pcm_common.firewall.views import View, view_of

__all__ = [
    "DEFAULT_PHONE_REGIONS",
    "SECRET_PLUGINS",
    "Action",
    "Finding",
    "Screened",
    "ScreenedMetadata",
    "SecretDetected",
    "WriteFirewall",
]

# Regions whose national phone formats are tried, in this order (a number with "+" and a
# country code is found whatever the list).
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "FR", "JP", "IN", "AU", "ES", "IT", "BR")


class Action(StrEnum):
    BLOCK = "block"
    REDACT = "redact"
    ALLOW = "allow"


class SecretDetected(Exception):
    """A write carried a secret under the `block` action: nothing of it is stored.
    `items`: per offending item, its index and the kinds found (never the text)."""

    def __init__(self, items: list[dict[str, object]]) -> None:
        super().__init__(f"secret detected in {len(items)} item(s)")
        self.items = items


class Finding(NamedTuple):
    category: str  # "secret" or "pii"
    kind: str  # e.g. "AWS Access Key", "email"
    start: int
    end: int


class _Kinds:
    blocked: list[Finding]
    redacted: list[Finding]

    @property
    def blocked_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.blocked})

    @property
    def redacted_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.redacted})


@dataclass
class Screened(_Kinds):
    """The text to store (redacted where the action says so) and what was found."""

    text: str
    blocked: list[Finding] = field(default_factory=list)
    redacted: list[Finding] = field(default_factory=list)


@dataclass
class ScreenedMetadata(_Kinds):
    """The metadata to store (string and number values redacted where the action says so;
    keys are names, never rewritten) and what was found."""

    metadata: dict[str, Any]
    blocked: list[Finding] = field(default_factory=list)
    redacted: list[Finding] = field(default_factory=list)


_SPACE = " \t\r\n"
_NEXT_SPACE = re.compile(r"\s")


def _whole_tokens(text: str, hits: list[Hit]) -> list[Hit]:
    """Each secret widened to the whitespace-delimited tokens it touches: a redaction
    leaves no part of it (a URL's user, a key's tail after a comma) behind. (In text
    order, reusing the last token's bounds: many hits in one long token cost one scan.)"""
    out: list[Hit] = []
    token = (0, 0)
    for h in sorted(hits, key=lambda h: h.start):
        lo, hi = h.start, h.end
        while lo < hi and text[lo] in _SPACE:
            lo += 1
        while hi > lo and text[hi - 1] in _SPACE:
            hi -= 1
        if lo == hi:
            continue
        if not token[0] <= lo < token[1]:
            token = (max(text.rfind(c, 0, lo) for c in _SPACE) + 1, lo)
        if hi > token[1]:
            after = _NEXT_SPACE.search(text, hi)
            token = (token[0], after.start() if after else len(text))
        out.append(Hit(h.kind, min(lo, token[0]), token[1]))
    return out


def _merge(findings: list[Finding]) -> list[Finding]:
    """Overlapping spans as one (the first found names it), in text order."""
    out: list[Finding] = []
    for f in sorted(findings, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1].end:
            last = out[-1]
            out[-1] = Finding(last.category, last.kind, last.start, max(last.end, f.end))
        else:
            out.append(f)
    return out


def _label(f: Finding) -> str:
    kind = "SECRET" if f.category == "secret" else f.kind.upper()
    return f"[REDACTED_{kind}]"


def _redact(text: str, spans: list[Finding]) -> str:
    out, at = [], 0
    for f in spans:
        out += [text[at : f.start], _label(f)]
        at = f.end
    out.append(text[at:])
    return "".join(out)


def _in_original(view: View, category: str, hits: list[Hit]) -> list[Finding]:
    if view.origin is None:
        return [Finding(category, *h) for h in hits]
    return [Finding(category, h.kind, *view.span(h.start, h.end)) for h in hits]


def _secrets_in(view: View, first_only: bool = False) -> list[Finding]:
    found: list[Finding] = []
    for reading in (view, *grouped_views(view)):  # keys written in groups read as one token
        hits = _whole_tokens(reading.text, secret_hits(reading.text, first_only))
        found += _in_original(reading, "secret", hits)
    return found


Path = tuple[str | int, ...]


@dataclass(frozen=True)
class _Leaf:
    """A metadata value as a line of the text that screens it: `key: value`."""

    path: Path
    start: int  # of the value in that text
    end: int

    def touches(self, f: Finding) -> bool:
        return f.start < self.end and f.end > self.start

    def clipped(self, f: Finding) -> Finding:
        """`f` in the value's own positions."""
        lo, hi = max(f.start, self.start), min(f.end, self.end)
        return Finding(f.category, f.kind, lo - self.start, hi - self.start)


def _scalars(value: Any, path: Path, key: str) -> Iterator[tuple[Path, str, str]]:
    """(path, key, value as text) of every string and number in `value`; a list's items
    go under the list's key."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _scalars(v, (*path, k), str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _scalars(v, (*path, i), key)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield path, key, str(value)


def _rendered(metadata: dict[str, Any]) -> tuple[str, list[_Leaf]]:
    """Metadata as lines of `key: value`, so that a key gives its value context
    (`password: hunter2`), and where each value lies in them."""
    leaves, lines, at = [], [], 0
    for path, key, value in _scalars(metadata, (), ""):
        line = f"{key}: {value}"
        leaves.append(_Leaf(path, at + len(key) + 2, at + len(line)))
        lines.append(line)
        at += len(line) + 1
    return "\n".join(lines), leaves


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _put(value: Any, path: Path, new: str) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


class WriteFirewall:
    def __init__(
        self,
        secrets: Action = Action.BLOCK,
        pii: Action = Action.REDACT,
        phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS,
    ) -> None:
        self.secrets = secrets
        self.pii = pii
        self.phone_regions = phone_regions

    def screen(self, text: str) -> Screened:
        return self.screen_many([text])[0]

    def screen_many(self, texts: list[str]) -> list[Screened]:
        return [self._screen(t) for t in texts]

    def screen_request(
        self, texts: list[str], metadatas: list[dict[str, Any]], names: list[str]
    ) -> tuple[list[Screened], list[ScreenedMetadata], dict[str, list[str]]]:
        """Each text and metadata screened, and the names (user ids, workspaces, projects,
        episodes) that carry a secret, with its kinds. A name is an identifier, never
        rewritten, so any secret in one blocks the write unless secrets are allowed; PII
        is fine there (a user id may be an e-mail address)."""
        bad: dict[str, list[str]] = {}
        if self.secrets is not Action.ALLOW:
            for name in names:
                kinds = sorted({f.kind for f in _secrets_in(view_of(name))})
                if kinds:
                    bad[name] = kinds
        return (
            [self._screen(t) for t in texts],
            [self.screen_metadata(m) for m in metadatas],
            bad,
        )

    def screen_metadata(self, metadata: dict[str, Any]) -> ScreenedMetadata:
        """Findings inside values are redacted there (a number becomes a string); a
        secret in a key blocks, as one in a name does."""
        text, leaves = _rendered(metadata)
        blocked, redacted = self._findings(text)
        in_keys = [
            f
            for f in redacted
            if f.category == "secret" and not any(leaf.touches(f) for leaf in leaves)
        ]
        if blocked or in_keys:
            return ScreenedMetadata(metadata, blocked=blocked or in_keys)
        if not redacted:
            return ScreenedMetadata(metadata)
        out, kept = _copy(metadata), []
        for leaf in leaves:
            inside = [leaf.clipped(f) for f in redacted if leaf.touches(f)]
            if inside:
                _put(out, leaf.path, _redact(text[leaf.start : leaf.end], inside))
                kept += inside
        return ScreenedMetadata(out, redacted=kept)

    def _findings(self, text: str) -> tuple[list[Finding], list[Finding]]:
        """(blocked, redacted) findings in `text`, in text order; redacted ones merged."""
        view = view_of(text)
        found: list[Finding] = []
        if self.secrets is not Action.ALLOW:
            found += _secrets_in(view, first_only=self.secrets is Action.BLOCK)
        if self.pii is not Action.ALLOW and not (found and self.secrets is Action.BLOCK):
            # (A text with a blocked secret is not stored: its PII need not be looked for.)
            found += _in_original(view, "pii", pii_hits(view.text, self.phone_regions))
        action = {"secret": self.secrets, "pii": self.pii}
        blocked = [f for f in found if action[f.category] is Action.BLOCK]
        if blocked:  # every kind stays named: the 422 says what was found
            return sorted(set(blocked), key=lambda f: (f.start, f.end, f.kind)), []
        return [], _merge(found)

    def _screen(self, text: str) -> Screened:
        blocked, redacted = self._findings(text)
        if blocked or not redacted:
            return Screened(text, blocked=blocked)
        return Screened(_redact(text, redacted), redacted=redacted)
