"""Keys a person wrote in groups, read back as one token.

People copy keys out by hand in groups of any size ("AKIA IOSF ODNN 7EXA MPLE",
"ghp_Ab3d9 xY 12QwEr ..."), with dashes or dots between them ("AKIA-IOSF-ODNN-..."), or
broken over lines; a key split by zero-width characters is one group already (the view
drops them). The secret detectors read each text once as written and once more for each
reading here that joins such groups.

- Three readings, one for each thing a person may put between groups. *Spaced*: groups
  of a key's characters, dashes and dots (`[A-Za-z0-9_+/=.-]`) between 1-5 spaces, tabs
  and line breaks ("sk-ant-api03-Me IraA ..." reads "sk-ant-api03-MeIraA...", with the
  dashes the key's own pattern needs). *Dotted*: dots count with the spaces, dashes with
  the groups. *Dashed*: the other way round ("AKIA-IOSF-ODNN-..." reads "AKIAIOSFODNN...").
  The dotted and dashed readings are made only where they remove a dot, or a dash.
- In a reading, a grouped key is a stretch of groups that starts and ends with a key-like
  group (a digit, one of `_+/=` or the reading's group marks, or a capital after its
  first character), with at most one word-like group (letters, no capital inside), or two
  of at most 8 letters each, between two key-like ones: random chunks can read as words
  ("jurj", "Heue Fnkxbz"). A group key-like only by its capitals at an end, next to a
  word-like one, is prose around the key ("HF token hf_...", "... for AWS") and is left
  out. The stretch has 12 characters at least and one group that mixes letters with
  digits or has a capital after a small letter. Prose rarely makes one ("the cat sat"
  has no key-like group, "COVID-19 and H1N1" joins to nothing a detector knows), and a
  joined stretch only ever goes to the secret detectors.

Limits: a word-like group at the very start or end of a key ("... 7EXA mple"), a stretch
broken by longer words, and a vendor prefix of words before a dash with a word-like first
chunk ("pul-abcd-ef01-...") are not joined: such a key reads as prose. A key whose own
characters include dashes, written with dashes between its groups, has no one reading
(which dash is the key's?): it is caught where its own pattern allows dashes anyway.

Every pattern here runs in RE2 (linear in the text, whatever it holds); groups and
separators are made of different characters, so a stretch starts at a group's start and
ends at a group's end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

from pcm_ingest.firewall.views import View, without

Span = tuple[int, int]
_MIN_CHARS = 12  # of a grouped key, separators left out


def _re2(pattern: str) -> re2._Regexp:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


@dataclass(frozen=True)
class _Reading:
    """One way to read groups: `mark` (a dash or a dot, or none) separates groups with the
    spaces; the other marks belong to groups."""

    mark: str
    stretch: re2._Regexp  # a grouped key's candidate, from its first group to its last
    separator: re.Pattern[bytes]
    mixed: re2._Regexp  # a group of letters and digits, or a capital after a small letter


def _reading(mark: str) -> _Reading:
    kept = re.escape("".join(m for m in ".-" if m != mark))
    g = f"[A-Za-z0-9_+/={kept}]"  # a group's character
    # Key-like: a character words do not have, or a capital inside; "strong" unless it is
    # capitals alone (an acronym: "AWS", "HF"). (RE2 has no look-around: a group's own
    # pattern reaches its ends because separators are other characters.)
    key = f"{g}*(?:[0-9_+/={kept}]|[A-Za-z][A-Z]){g}*"
    strong = f"{g}*(?:[0-9_+/={kept}]|[a-z][A-Z]){g}*"
    sep = f"[ \\t\\r\\n{re.escape(mark)}]{{1,5}}"
    gap = f"(?:[A-Za-z][a-z]*{sep}|[A-Za-z][a-z]{{0,7}}{sep}[A-Za-z][a-z]{{0,7}}{sep})"
    # An acronym next to a word at an end of a stretch is prose around a key ("HF token
    # hf_...", "... for AWS"): it starts one only right before a key-like group, and is
    # reached over a gap only with a key-like group after it, right away or over a gap.
    inner = f"(?:{strong}|{key}{sep}(?:{gap})?{key})"
    step = f"{sep}(?:{key}|{gap}{inner})"
    stretch = f"{strong}(?:{step})+|{key}{sep}{key}(?:{step})*"
    mixed = f"[A-Za-z]{g}*[0-9]|[0-9]{g}*[A-Za-z]|[a-z][A-Z]"
    separator = re.compile(f"[ \t\r\n{re.escape(mark)}]+".encode())
    return _Reading(mark, _re2(stretch), separator, _re2(mixed))


_READINGS = (_reading(""), _reading("."), _reading("-"))


def _removed(reading: _Reading, text: bytes) -> list[Span]:
    """The separators inside each grouped key of `text`, read one way."""
    out: list[Span] = []
    for m in reading.stretch.finditer(text):
        start, end = m.span()
        if end - start <= _MIN_CHARS or not reading.mixed.search(text, start, end):
            continue
        seps = [cut.span() for cut in reading.separator.finditer(text, start, end)]
        if end - start - sum(b - a for a, b in seps) >= _MIN_CHARS:
            out += seps
    return out


def grouped_views(view: View) -> list[View]:
    """`view` read with its grouped keys joined: the spaced reading and, where they remove
    a dot or a dash, the dotted and dashed ones (none when the text has no grouped key)."""
    text = view.text.encode("ascii")  # (a view is ASCII: positions stay the same)
    views = []
    for reading in _READINGS:
        if reading.mark and reading.mark.encode() not in text:
            continue
        spans = _removed(reading, text)
        mark = reading.mark.encode()
        if mark and not any(mark in text[a:b] for a, b in spans):
            continue  # what the spaced reading joins already
        if spans:
            views.append(without(view, spans))
    return views
