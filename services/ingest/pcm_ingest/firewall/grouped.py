"""Keys a person wrote in groups, read back as one token.

People copy keys out by hand in groups of any size ("AKIA IOSF ODNN 7EXA MPLE",
"ghp_Ab3d9 xY 12QwEr ..."), with dashes or dots between them ("AKIA-IOSF-ODNN-..."), or
broken over lines; a key split by zero-width characters is one group already (the view
drops them). The secret detectors read each text once as written and once more for each
reading here in which such groups are joined.

- A run: groups of a key's characters (`[A-Za-z0-9_+/=]`, at most 64 each) with
  separators between them: up to 5 spaces, tabs, line breaks, dashes and dots.
- Readings of a run, one for each mark a separator may be made of. *Spaced*: only spaces
  and line breaks are removed; a dash or dot stays ("sk-ant- api03-Me IraA ..." reads
  "sk-ant-api03-MeIraA...", with the dashes the key's own pattern needs), and one with no
  space around it is part of its group. *Dotted* and *dashed*: dots, or dashes, are
  removed as well ("AKIA-IOSF-ODNN-..." reads "AKIAIOSFODNN..."). A reading is made only
  where it joins something the spaced one does not.
- In a reading, a grouped key is a stretch of groups that starts and ends with a key-like
  group (a digit, one of `_+/=.-`, or a capital after its first character), with at most
  one word-like group, or two of at most 12 characters together, between two key-like ones
  (random chunks can read as words: "jurj", "Qhfe", "Lw"). A group key-like only by its
  capitals at an end, next to a word-like one, is prose around the key ("HF token
  hf_...", "... for AWS") and is left out. The stretch has 2 groups at least, 12
  characters at least, and one group that mixes letters with digits or has a capital
  after a small letter. Prose rarely makes one ("the cat sat" has no key-like group,
  "COVID-19 and H1N1" joins to nothing a detector knows), and a joined stretch only ever
  goes to the secret detectors.

Limits: a word-like group at the very start or end of a key ("... 7EXA mple"), a stretch
broken by longer words, and a vendor prefix of words before a dash with a word-like first
chunk ("pul-abcd-ef01-...") are not joined: such a key reads as prose. A key whose own
characters include dashes, written with dashes between its groups, has no one reading
(which dash is the key's?): it is caught where its own pattern allows dashes anyway.

Every step is linear: the run pattern has one way to match any text (a group ends where a
separator starts), and each group is classified once per reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pcm_ingest.firewall.views import View, without

_CHARS = "A-Za-z0-9_+/="
# Spaces, at most one line break, dashes and dots, 5 characters at most ("  ", " - ", "\n",
# "-.": a key's own dash next to a dot between groups).
_SEPARATOR = r"[ \t\r\n.-]{1,5}"
# (The look-behind starts a run only at a group's first character: a text of one endless
# group is tried once, not at each of its characters.)
_RUN = re.compile(
    rf"(?<![{_CHARS}])[{_CHARS}]{{1,64}}(?:{_SEPARATOR}[{_CHARS}]{{1,64}})+(?![{_CHARS}])"
)
_SEPARATORS = re.compile(_SEPARATOR)
_MARKS = (".", "-")

_STRONG = re.compile(r"[0-9_+/=.-]")  # key-like by a character a word does not have
_CAPITAL_INSIDE = re.compile(r".[A-Z]")  # key-like, or an acronym: "AWS", "HF"
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"[0-9]")
_CAMEL = re.compile(r"[a-z][A-Z]")
_MIN_GROUPS = 2
_MIN_CHARS = 12
_GAP_CHARS = 12  # two word-like groups inside a key: at most this long together

Span = tuple[int, int]
_STRONG_KEY, _WEAK_KEY, _WORD = 2, 1, 0


def _mixed(text: str) -> bool:
    """Letters with digits, or a capital after a small letter (each test one pass, so a
    long text costs what its length does)."""
    return bool(_LETTER.search(text) and _DIGIT.search(text)) or bool(_CAMEL.search(text))


def _kind(group: str) -> int:
    if _STRONG.search(group):
        return _STRONG_KEY
    return _WEAK_KEY if _CAPITAL_INSIDE.search(group) else _WORD


def _next_key(groups: list[str], kinds: list[int], j: int) -> int | None:
    """The key-like group after `groups[j]` that the same key may reach, if any."""
    n = len(groups)
    if j + 1 < n and kinds[j + 1]:
        return j + 1
    if j + 2 < n and kinds[j + 2]:
        return j + 2
    if j + 3 < n and kinds[j + 3] and len(groups[j + 1]) + len(groups[j + 2]) <= _GAP_CHARS:
        return j + 3
    return None


def _stretches(groups: list[str]) -> Iterator[tuple[int, int]]:
    """(first, last) group indexes of each grouped key among a reading's groups."""
    kinds = [_kind(g) for g in groups]
    n, i = len(groups), 0
    while i < n:
        if not kinds[i]:
            i += 1
            continue
        j = i
        while (k := _next_key(groups, kinds, j)) is not None:
            j = k
        end = j
        while i < j and not kinds[i + 1] and kinds[i] == _WEAK_KEY and not _mixed(groups[i]):
            i = next(k for k in range(i + 1, j + 1) if kinds[k])
        while j > i and not kinds[j - 1] and kinds[j] == _WEAK_KEY and not _mixed(groups[j]):
            j = next(k for k in range(j - 1, i - 1, -1) if kinds[k])
        if (
            j + 1 - i >= _MIN_GROUPS
            and sum(len(g) for g in groups[i : j + 1]) >= _MIN_CHARS
            and any(_mixed(g) for g in groups[i : j + 1])
        ):
            yield i, j
        i = end + 1


def _removed(text: str, start: int, end: int, mark: str | None) -> list[Span]:
    """The characters a reading removes of a separator: spaces, line breaks and its own
    mark; a dash or dot that is not its mark stays (it may be the key's own)."""
    out: list[Span] = []
    for k in range(start, end):
        if text[k] in _MARKS and text[k] != mark:
            continue
        if out and out[-1][1] == k:
            out[-1] = (out[-1][0], k + 1)
        else:
            out.append((k, k + 1))
    return out


def _reading(
    text: str, groups: list[str], cuts: list[re.Match[str]], mark: str | None
) -> list[Span]:
    """The spans one reading removes in one run: a bare separator of another mark is part
    of its group there."""
    merged, removed = [groups[0]], []
    for cut, group in zip(cuts, groups[1:], strict=True):
        spans = _removed(text, *cut.span(), mark)
        if spans:
            merged.append(group)
            removed.append(spans)
        else:  # only marks of other readings: "sk-ant" is one group when read spaced
            merged[-1] += cut.group() + group
    return [
        span
        for first, last in _stretches(merged)
        for k in range(first, last)
        for span in removed[k]
    ]


def grouped_views(view: View) -> list[View]:
    """`view` read with its grouped keys joined: the spaced reading and, where they join
    more, the dotted and dashed ones (none when the text has no grouped key)."""
    text = view.text
    readings: dict[str | None, list[Span]] = {None: [], ".": [], "-": []}
    for run in _RUN.finditer(text):
        if not _mixed(run.group()):
            continue  # prose, dates, version numbers: no group can be a key's
        cuts = list(_SEPARATORS.finditer(text, run.start(), run.end()))
        groups, at = [], run.start()
        for cut in cuts:
            groups.append(text[at : cut.start()])
            at = cut.end()
        groups.append(text[at : run.end()])
        for mark in readings:
            if mark is None or any(mark in cut.group() for cut in cuts):
                readings[mark] += _reading(text, groups, cuts, mark)
    spaced = set(readings[None])
    return [
        without(view, spans)
        for mark, spans in readings.items()
        if spans and (mark is None or set(spans) - spaced)
    ]
