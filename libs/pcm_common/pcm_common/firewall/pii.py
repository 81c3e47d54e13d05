"""PII detectors over a view's ASCII text (`views.View.text`), each linear in its length:
a pattern finds candidates of a bounded length, a library decides (python-stdnum's
checksums and registries, Google's libphonenumber through `phonenumbers`, `ipaddress`);
words just before a candidate decide where its shape alone would catch ordinary numbers
(a 9-digit SSN, a passport number, a date of birth).

The patterns run in Python's `re`: every repeat in them is bounded and no two parts can
match the same characters, so each start position costs a bounded number of steps (a
text can hold many candidates, and RE2's Python binding costs ~10 µs a match where `re`
costs ~1 µs). Where a run could be long (an e-mail's local part) a possessive repeat and
a look-behind keep it to one attempt per run. Each pattern has a gate in RE2 that matches
wherever it does (its look-arounds left out): one pass of RE2's automaton over a text
(~0.2 ms for 100 kB) says whether, and from where, `re` (which tries every position, ~5
ms for 100 kB) needs to look at all; most texts hold no candidate of most kinds.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

import phonenumbers
import re2
from phonenumbers import Leniency
from stdnum import iban, isbn, luhn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.cn import ric
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.gb import nhs
from stdnum.in_ import aadhaar, pan
from stdnum.it import codicefiscale
from stdnum.jp import in_ as mynumber
from stdnum.kr import rrn
from stdnum.nl import bsn
from stdnum.us import itin, ssn

from pcm_common.firewall.secrets import Hit, compile_re2


@dataclass(frozen=True)
class Kind:
    """A PII shape: a pattern for candidates, a validator, and (where the shape alone is
    too common) words that must stand just before it."""

    name: str
    pattern: re.Pattern[str]
    gate: re2._Regexp  # matches wherever `pattern` does, and starts no later
    valid: Callable[[str], bool]
    context: re.Pattern[str] | None = None
    needs: str = ""  # a character any match holds: without it the text is not scanned


_CONTEXT_CHARS = 48  # how far before a candidate its context words may stand


def _words(*words: str) -> re.Pattern[str]:
    """Context words, matched in the few characters before a candidate."""
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


_NON_DIGITS = re.compile(r"\D+")


def _digits(s: str) -> str:
    return _NON_DIGITS.sub("", s)


def _kind(
    name: str,
    pattern: str,
    valid: Callable[[str], bool],
    context: re.Pattern[str] | None = None,
    needs: str = "",
    gate: str | None = None,
) -> Kind:
    """`gate`: the pattern as RE2 takes it, where `pattern` has what RE2 lacks."""
    return Kind(
        name, re.compile(pattern, re.ASCII), compile_re2(gate or pattern), valid, context, needs
    )


def _first(gate: re2._Regexp, data: bytes) -> int | None:
    """Where `gate` first matches in `data` (a view's text as ASCII bytes), if anywhere."""
    m = gate.search(data)
    return None if m is None else m.start()


_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def _nino(s: str) -> bool:
    """UK National Insurance number (HMRC's rules; python-stdnum has none)."""
    return s.replace(" ", "")[:2] not in _NINO_BAD_PREFIXES


def _card(s: str) -> bool:
    digits = _digits(s)
    return 13 <= len(digits) <= 19 and luhn.is_valid(digits)


def _ip(s: str) -> bool:
    try:
        ip = ipaddress.ip_address(s)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified)


_IPV6_MIN_GROUPS = 3  # "Foo::Bar" and "10:30" are no addresses


def _ipv6(s: str) -> bool:
    groups = [g for g in s.split(":") if g]
    return len(groups) >= _IPV6_MIN_GROUPS and any(c.isdigit() for c in s) and _ip(s.strip(":"))


_SSN_WORDS = _words("ssn", "social security", "ss#")
_SIN_WORDS = _words("sin", "social insurance")
_BSN_WORDS = _words("bsn", "burgerservicenummer")
_KINDS: tuple[Kind, ...] = (
    _kind(
        "email",
        r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}+@"
        r"[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b",
        lambda s: True,
        needs="@",
        gate=r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b",
    ),
    _kind("ssn", r"\b\d{3}-\d{2}-\d{4}\b|\b\d{3} \d{2} \d{4}\b", ssn.is_valid),
    _kind("ssn", r"\b\d{9}\b", ssn.is_valid, _SSN_WORDS),
    _kind("tax_id", r"\b9\d{2}-\d{2}-\d{4}\b", itin.is_valid),
    _kind("card", r"\b(?:\d[ -]?){12,18}\d\b", _card),
    _kind(
        "national_id",
        r"\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b",
        _nino,
    ),
    _kind(
        "national_id", r"\b[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}\b", nir.is_valid
    ),
    _kind("national_id", r"\b[2-9]\d{3}[ -]\d{4}[ -]\d{4}\b", aadhaar.is_valid),
    _kind("national_id", r"\b[2-9]\d{11}\b", aadhaar.is_valid, _words("aadhaa?r", "uid(?:ai)?")),
    _kind("tax_id", r"\b[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]\b", pan.is_valid),
    _kind(
        "national_id",
        r"\b\d{4}[ -]?\d{4}[ -]?\d{4}\b",
        mynumber.is_valid,
        _words("my ?number", "individual number", "kojin bangou"),
    ),
    _kind(
        "tax_id",
        r"\b\d{2} ?\d{3} ?\d{3} ?\d{3}\b",
        idnr.is_valid,
        _words("steuer-?id", "steuer-?identifikationsnummer", "idnr", "tax id", "tin"),
    ),
    _kind("national_id", r"\b\d{3}[ -]?\d{3}[ -]?\d{4}\b", nhs.is_valid, _words("nhs")),
    _kind("national_id", r"\b\d{3}[ -]\d{3}[ -]\d{3}\b", sin.is_valid, _SIN_WORDS),
    _kind("national_id", r"\b\d{8}-?[A-Z]\b", dni.is_valid),
    _kind("national_id", r"\b[XYZ]-?\d{7}-?[A-Z]\b", nie.is_valid),
    _kind(
        "national_id", r"\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b", codicefiscale.is_valid
    ),
    _kind("national_id", r"\b\d{4}\.?\d{2}\.?\d{3}\b", bsn.is_valid, _BSN_WORDS),
    _kind("national_id", r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b", cpf.is_valid),
    _kind("national_id", r"\b\d{17}[\dX]\b", ric.is_valid),
    _kind("national_id", r"\b\d{6}-\d{7}\b", rrn.is_valid),
    _kind("ip", r"\b(?:\d{1,3}\.){3}\d{1,3}\b", _ip, needs="."),
    _kind("ip", r"(?:\b[0-9A-Fa-f]{1,4})?(?::[0-9A-Fa-f]{0,4}){2,7}", _ipv6, needs=":"),
)


def _context_ok(text: str, start: int, context: re.Pattern[str] | None) -> bool:
    return context is None or bool(context.search(text, max(0, start - _CONTEXT_CHARS), start))


def _kind_hits(text: str, data: bytes) -> Iterator[Hit]:
    for kind in _KINDS:
        if kind.needs not in text or (start := _first(kind.gate, data)) is None:
            continue
        valid: dict[str, bool] = {}  # a value repeated many times is checked once
        for m in kind.pattern.finditer(text, start):
            value = m.group()
            if not _context_ok(text, m.start(), kind.context):
                continue
            if value not in valid:
                valid[value] = kind.valid(value)
            if valid[value]:
                yield Hit(kind.name, m.start(), m.end())


# IBANs: the pattern may run on into a following capitalised word ("... 00 BIC"); the
# longest prefix of whole groups that is valid is the IBAN.
_IBAN_PATTERN = r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"
_IBAN = re.compile(_IBAN_PATTERN)
_IBAN_GATE = compile_re2(_IBAN_PATTERN)
_IBAN_MIN_CHARS = 15


def _iban_hits(text: str, data: bytes) -> Iterator[Hit]:
    if (start := _first(_IBAN_GATE, data)) is None:
        return
    for m in _IBAN.finditer(text, start):
        value = m.group()
        while len(value.replace(" ", "")) >= _IBAN_MIN_CHARS:
            if iban.is_valid(value):
                yield Hit("iban", m.start(), m.start() + len(value))
                break
            value = value[: max(value.rfind(" "), len(value) - 4)].rstrip()


# Documents named by a word before their number: the number alone is any code.
_DOCUMENT = re.compile(
    r"(?i)\b(passport|driver'?s? licen[cs]e|licen[cs]e no\.?|licen[cs]e number|id card|"
    r"identity card|national id|"
    r"personalausweis|reisepass|carte d'identite|passeport)(?: (?:no\.?|number|num|#))?"
    r"\s{0,3}[:#]?\s{0,3}(?:is |was )?([A-Za-z0-9-]{5,16})\b"
)
_DOCUMENT_DIGITS = 4


# Words one of which the text must hold for a pattern that starts with words to be run.
_DOCUMENT_WORDS = ("pass", "licen", "id card", "identity", "national", "ausweis")
_BIRTH_WORDS = ("birth", "born", "dob", "d.o.b", "geb", "ne le", "nee le")


def _has_any(lowered: str, words: tuple[str, ...]) -> bool:
    return any(w in lowered for w in words)


def _document_hits(text: str) -> Iterator[Hit]:
    for m in _DOCUMENT.finditer(text):
        number = m.group(2)
        if sum(c.isdigit() for c in number) >= _DOCUMENT_DIGITS:
            kind = "passport" if "pass" in m.group(1).lower() else "national_id"
            yield Hit(kind, m.start(2), m.end(2))


# Dates of birth: a date right after words that say birth. Other dates are left alone.
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|"
    r"\d{1,2}(?:st|nd|rd|th)?\s(?:of\s)?"
    + _MONTH
    + r",?\s\d{4}|"
    + _MONTH
    + r"\s\d{1,2}(?:st|nd|rd|th)?,?\s\d{4})"
)
_BIRTH_DATE = re.compile(
    r"(?i)\b(?:d\.?o\.?b\.?|date of birth|birth ?date|birthday|born(?: on| in)?|"
    r"geboren(?: am)?|geb\.|ne le|nee le)[\s:,-]{0,4}(?:is |was |on )?(" + _DATE + r")"
)


def _birth_hits(text: str) -> Iterator[Hit]:
    for m in _BIRTH_DATE.finditer(text):
        yield Hit("dob", m.start(1), m.end(1))


# Phone numbers: candidates are digit groups with the separators people write (bounded),
# split into numbers by libphonenumber, tried in the configured regions.
_PHONE_CANDIDATE = re.compile(r"(?<!\w)(?:\+ ?)?\(?\d[\d ().\-/+]*\d(?: ?(?:x|ext\.?) ?\d{1,5})?")
_PHONE_GROUP = re.compile(r"\+?\(?\d+\)?")  # inside one bounded candidate
_PHONE_MIN_DIGITS = 10  # without a leading "+": a national number with its area code
_PHONE_MIN_INTL_DIGITS = 8
_PHONE_MAX_DIGITS = 15  # ITU E.164
_PHONE_MAX_GROUPS = 6
_PHONE_TRIES = 64  # numbers checked per text; past it, phone-shaped candidates count
_TWO_DIGITS = re.compile(r"\d\d")
_DATE_TAIL = re.compile(r"[ T]?\d{0,4}")
_SSN_SHAPE = re.compile(r"\d{3}[- ]\d{2}[- ]\d{4}")
_DATE_HEAD = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")


@lru_cache(maxsize=8192)
def _is_phone(raw: str, regions: tuple[str, ...]) -> bool:
    """`raw` is one valid phone number: international, or national in one of `regions`.
    (A national number must also pass libphonenumber's matcher at its `VALID` leniency,
    which wants the trunk prefix where the region writes one: "12.12.12.12.12" is no
    British number, "020 7946 0958" is.)"""
    if raw.startswith("+"):
        try:
            return phonenumbers.is_valid_number(phonenumbers.parse(raw, None))
        except phonenumbers.NumberParseException:
            return False
    digits = _digits(raw)
    for region in regions:
        try:
            number = phonenumbers.parse(raw, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number) and any(
            _digits(m.raw_string) == digits
            for m in phonenumbers.PhoneNumberMatcher(raw, region, leniency=Leniency.VALID)
        ):
            return True
    return False


def _enough_digits(digits: int, groups: int, intl: bool) -> bool:
    """A bare figure ("3100100 euros") can pass for a local number: a phone needs an
    international "+", or its area code (10+ digits), or 9 digits written in 3+ groups
    as Spanish and Italian numbers are ("612 345 678")."""
    if digits > _PHONE_MAX_DIGITS:
        return False
    if intl:
        return digits >= _PHONE_MIN_INTL_DIGITS
    return digits >= _PHONE_MIN_DIGITS or (digits == _PHONE_MIN_DIGITS - 1 and groups >= 3)


def _other_shape(raw: str) -> bool:
    """A date with a figure after it ("2023-05-07 10") or an SSN's shape: no phone."""
    if _SSN_SHAPE.fullmatch(raw):
        return True
    head = _DATE_HEAD.match(raw)
    # (One figure after it, as a time is: "06.12.34.56.78" is a French number.)
    return head is not None and _DATE_TAIL.fullmatch(raw[head.end() :]) is not None


class _PhoneChecks:
    """libphonenumber's verdicts for one text, within a budget of numbers checked (~50 µs
    a region each): past it (a degenerate text), whatever is shaped like a phone counts."""

    def __init__(self, regions: tuple[str, ...]) -> None:
        self.regions = regions
        self.left = _PHONE_TRIES
        self.seen: dict[str, bool] = {}

    def __call__(self, raw: str) -> bool:
        verdict = self.seen.get(raw)
        if verdict is None:
            self.left -= 1
            verdict = not _other_shape(raw) and (self.left < 0 or _is_phone(raw, self.regions))
            self.seen[raw] = verdict
        return verdict


def _numbers_in(text: str, start: int, end: int, is_phone: _PhoneChecks) -> Iterator[Hit]:
    """The phone numbers in one candidate: from each digit group on, the longest run of
    groups that is a valid number ("415-555-2671 415-555-2672" holds two)."""
    if not _TWO_DIGITS.search(text, start, end):
        return  # "1-1-1-1": 10 digits never fit in 6 groups of one
    groups = [g.span() for g in _PHONE_GROUP.finditer(text, start, end)]
    # counts[k]: digits in groups[:k] (a group's length less its "+", "(" and ")")
    counts = list(
        accumulate(
            (hi - lo - (text[lo] in "+(") - (text[hi - 1] == ")") for lo, hi in groups),
            initial=0,
        )
    )
    i = 0
    while i < len(groups):
        top = min(len(groups), i + _PHONE_MAX_GROUPS)
        if counts[top] - counts[i] < _PHONE_MIN_INTL_DIGITS:
            i += 1  # "1-1-1-1": no run from here has a phone's digits
            continue
        intl = text[groups[i][0]] == "+"
        for j in range(top, i, -1):
            if not _enough_digits(counts[j] - counts[i], j - i, intl):
                continue
            raw = text[groups[i][0] : groups[j - 1][1]]
            if is_phone(raw):
                yield Hit("phone", groups[i][0], groups[j - 1][1])
                i = j - 1
                break
        i += 1


# A phone has 8 digits at least, with only its separators between them: no such run, no
# phone (most texts). A candidate starts at most 3 characters ("+ (") before its first
# digit, and no earlier candidate than this run's can hold one.
_PHONE_GATE = compile_re2(r"\d(?:[ ().\-/+]*\d){7}")
_PHONE_PREFIX = 3


def _phone_hits(text: str, data: bytes, regions: tuple[str, ...]) -> Iterator[Hit]:
    if (start := _first(_PHONE_GATE, data)) is None:
        return
    is_phone = _PhoneChecks(regions)
    for m in _PHONE_CANDIDATE.finditer(text, max(0, start - _PHONE_PREFIX)):
        if _labelled_isbn(text, m.start(), m.end()):
            continue
        yield from _numbers_in(text, m.start(), m.end(), is_phone)


# A book number written after its label ("ISBN 978-0-306-40615-7"): libphonenumber takes
# a run of its digits for a number in some region. Only a labelled one with a valid check
# digit is let through (a bare 10-digit phone passes the ISBN-10 check one time in 11).
_ISBN_LABEL = re.compile(r"\bISBN(?:-1[03])?\s*:?\s*$", re.IGNORECASE)


def _labelled_isbn(text: str, start: int, end: int) -> bool:
    """After an ISBN label, a valid ISBN-13, or a valid ISBN-10 in its four hyphenated
    parts (a phone is not written so: "isbn 415-555-2671" stays a phone)."""
    if not _ISBN_LABEL.search(text, max(0, start - 12), start):
        return False
    raw = text[start:end].strip()
    if not isbn.is_valid(raw):
        return False
    return isbn.isbn_type(raw) == "ISBN13" or raw.count("-") == 3


def pii_hits(text: str, regions: tuple[str, ...]) -> list[Hit]:
    """Every PII item found in `text` (a view's ASCII text), in no particular order."""
    lowered = text.lower()
    data = text.encode("ascii")  # RE2 reads bytes without decoding its positions
    return [
        *_kind_hits(text, data),
        *_iban_hits(text, data),
        *(_document_hits(text) if _has_any(lowered, _DOCUMENT_WORDS) else ()),
        *(_birth_hits(text) if _has_any(lowered, _BIRTH_WORDS) else ()),
        *_phone_hits(text, data, regions),
    ]
