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

from pcm_common.firewall.views import View, kept

Span = tuple[int, int]
_MIN_CHARS = 12  # of a grouped key, separators left out
_SHORT = 512  # characters of a stretch that `re` checks for a mixed group


def _re2(pattern: bytes) -> re2._Regexp:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


# Where a grouped key can be: a run of group and separator characters (of any reading)
# with letters and digits, or a capital after a small letter, in it. Runs a few
# characters apart are looked at together (a stretch never crosses what separates them,
# and one scan of a list of part numbers costs less than 10,000 short ones).
_RUN = re.compile(rb"[A-Za-z0-9_+/=. \t\r\n-]{13,}")  # shorter holds no 12-character key
_DIGIT = re.compile(rb"[0-9]")
_LETTER = re.compile(rb"[A-Za-z]")
_CAMEL = re.compile(rb"[a-z][A-Z]")
_APART = 8


def _regions(text: bytes) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for run in _RUN.finditer(text):
        start, end = run.span()
        if not (
            (_DIGIT.search(text, start, end) and _LETTER.search(text, start, end))
            or _CAMEL.search(text, start, end)
        ):
            continue
        if out and start - out[-1][1] <= _APART:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


@dataclass(frozen=True)
class _Reading:
    """One way to read groups: `mark` (a dash or a dot, or none) separates groups with the
    spaces; the other marks belong to groups."""

    mark: bytes
    stretch: re.Pattern[bytes]  # a grouped key's candidate, from its first group to its last
    # A group of letters and digits, or a capital after a small letter: in `re` for a
    # short stretch (a call to RE2 costs ~5 µs), in RE2 for a long one (a bounded lazy
    # repeat tried at each letter of 64-letter groups costs `re` 64 steps a letter).
    mixed: re.Pattern[bytes]
    mixed_re2: re2._Regexp
    separators: bytes  # the characters a stretch loses
    keep: bytes  # `bytes.translate` table: 0 for those, 1 for any other character


def _reading(mark: str) -> _Reading:
    others = re.escape("".join(m for m in ".-" if m != mark))
    g = f"[A-Za-z0-9_+/={others}]"  # a group's character
    group = f"{g}{{1,64}}+(?!{g})"
    # Key-like: a character words do not have, or a capital inside; "strong" unless it is
    # capitals alone (an acronym: "AWS", "HF").
    key = f"(?={g}{{0,63}}[0-9_+/={others}]|{g}{{0,62}}[A-Za-z][A-Z]){group}"
    strong = f"(?={g}{{0,63}}[0-9_+/={others}]|{g}{{0,62}}[a-z][A-Z]){group}"
    sep = f"[ \\t\\r\\n{re.escape(mark)}]{{1,5}}+(?={g})"
    word = f"[A-Za-z][a-z]{{0,63}}+(?!{g}){sep}"
    short = f"[A-Za-z][a-z]{{0,7}}+(?!{g}){sep}"
    gap = f"(?:{word}|{short}{short})"
    # An acronym next to a word at an end of a stretch is prose around a key ("HF token
    # hf_...", "... for AWS"): it starts one only right before a key-like group, and is
    # reached over a gap only with a key-like group after it, right away or over a gap.
    head = f"(?:{strong}|{key}(?={sep}{key}))"
    inner = f"(?:{strong}|{key}(?={sep}(?:{gap})?{key}))"
    stretch = f"(?<!{g}){head}(?:{sep}(?:{key}|{gap}{inner}))+"
    mixed = f"[A-Za-z]{g}{{0,62}}?[0-9]|[0-9]{g}{{0,62}}?[A-Za-z]|[a-z][A-Z]".encode()
    separators = (" \t\r\n" + mark).encode()
    keep = bytes(0 if c in separators else 1 for c in range(256))
    return _Reading(
        mark.encode(),
        re.compile(stretch.encode()),
        re.compile(mixed),
        _re2(mixed),
        separators,
        keep,
    )


_READINGS = (_reading(""), _reading("."), _reading("-"))


def _keep(reading: _Reading, text: bytes, regions: list[tuple[int, int]]) -> bytearray | None:
    """Which characters of `text` the reading keeps (0: a separator inside a grouped
    key), or None when it joins nothing."""
    keep: bytearray | None = None
    for region_start, region_end in regions:
        for m in reading.stretch.finditer(text, region_start, region_end):
            start, end = m.span()
            stretch = m.group()
            if (
                len(stretch.translate(None, reading.separators)) < _MIN_CHARS
                or (reading.mark and reading.mark not in stretch)  # spaced joins it already
                or not (reading.mixed if end - start < _SHORT else reading.mixed_re2).search(
                    text, start, end
                )
            ):
                continue
            if keep is None:
                keep = bytearray(b"\x01") * len(text)
            keep[start:end] = stretch.translate(reading.keep)
    return keep


def grouped_views(view: View) -> list[View]:
    """`view` read with its grouped keys joined: the spaced reading and, where they remove
    a dot or a dash, the dotted and dashed ones (none when the text has no grouped key)."""
    text = view.text.encode("ascii")  # (a view is ASCII: positions stay the same)
    regions = _regions(text)
    views = []
    for reading in _READINGS if regions else ():
        if reading.mark and reading.mark not in text:
            continue
        keep = _keep(reading, text, regions)
        if keep is not None:
            views.append(kept(view, keep))
    return views
