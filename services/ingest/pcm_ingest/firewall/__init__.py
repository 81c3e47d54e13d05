"""Write firewall (DESIGN §4 and §6; the mnemos write-up's memory safety layer): every text
is screened before anything is stored, on every write path (single, batch, PATCH).

- Secrets: Yelp's detect-secrets plugins that look for a known credential shape (cloud
  keys, tokens of GitHub, GitLab, Slack, Stripe, npm, PyPI, ..., private key blocks, JWTs,
  passwords in URLs, `password = "..."`), plus a few shapes it does not know yet (current
  OpenAI and Anthropic keys, Google API keys, `SOMETHING_TOKEN=...` environment lines).
  Its entropy plugins are left out: on prose they flag ordinary words (91,824 hits over
  2,080 LoCoMo dev turns and 3,000 synthetic memories).
- PII: e-mail addresses, phone numbers (Google's libphonenumber, through `phonenumbers`),
  US social security numbers and payment card numbers (checked by python-stdnum: area
  rules, Luhn).

Each category has an action: `block` (the write is refused with 422, nothing stored),
`redact` (the match is replaced by `[REDACTED_<KIND>]` and the write is reported as
`redacted`) or `allow`. Defaults: secrets block, PII redact. Findings never carry the
matched text, so an error response or a log line cannot leak what it refused.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum

import phonenumbers
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import transient_settings
from stdnum import luhn
from stdnum.us import ssn


class Action(StrEnum):
    BLOCK = "block"
    REDACT = "redact"
    ALLOW = "allow"


# detect-secrets plugins with a credential shape (class names of detect_secrets.plugins).
SECRET_PLUGINS = (
    "AWSKeyDetector",
    "ArtifactoryDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)

# Shapes detect-secrets 1.5 does not cover.
_EXTRA_SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # The whole PEM block (detect-secrets marks only its BEGIN line): redaction must not
    # leave the key's body behind.
    (
        "Private Key",
        re.compile(
            r"-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z ]*PRIVATE KEY"
            r"( BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("Anthropic API Key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API Key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("Google API Key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    (
        "Secret Assignment",
        re.compile(
            r"\b[A-Z][A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY)[A-Z0-9_]*"
            r"\s*[=:]\s*['\"]?[^\s'\"]{8,}"
        ),
    ),
)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_DIGIT = re.compile(r"\d")
_PHONE_MIN_DIGITS = 10  # without a leading "+": a national number with its area code
# A secret found by detect-secrets is redacted as the whole token around it.
_TOKEN = re.compile(r"\S+")
_detect_lock = threading.Lock()  # detect-secrets keeps its plugin settings process-wide


class SecretDetected(Exception):
    """A write carried a secret under the `block` action: nothing of it is stored.
    `items`: per offending item, its index and the kinds found (never the text)."""

    def __init__(self, items: list[dict[str, object]]) -> None:
        super().__init__(f"secret detected in {len(items)} item(s)")
        self.items = items


@dataclass(frozen=True)
class Finding:
    category: str  # "secret" or "pii"
    kind: str  # e.g. "AWS Access Key", "email"
    start: int
    end: int


@dataclass
class Screened:
    """The text to store (redacted where the action says so) and what was found."""

    text: str
    blocked: list[Finding] = field(default_factory=list)
    redacted: list[Finding] = field(default_factory=list)

    @property
    def blocked_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.blocked})

    @property
    def redacted_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.redacted})


@contextmanager
def _detecting() -> Iterator[None]:
    """detect-secrets configured with `SECRET_PLUGINS` (its settings are process-wide, and
    setting them up costs ~1.5 ms: a batch is screened inside one of these)."""
    with _detect_lock, transient_settings({"plugins_used": [{"name": n} for n in SECRET_PLUGINS]}):
        yield


def _secret_spans(text: str) -> Iterator[Finding]:
    """Call inside `_detecting`."""
    for kind, pattern in _EXTRA_SECRETS:
        for m in pattern.finditer(text):
            yield Finding("secret", kind, m.start(), m.end())
    # Line by line: the plugins are line scanners.
    offset = 0
    for line in text.splitlines(keepends=True):
        for found in scan_line(line):
            value = found.secret_value or ""
            at = line.find(value) if value else -1
            if at < 0:
                yield Finding("secret", found.type, offset, offset + len(line.rstrip()))
                continue
            token = next((t for t in _TOKEN.finditer(line) if t.start() <= at < t.end()), None)
            lo, hi = (token.start(), token.end()) if token else (at, at + len(value))
            yield Finding("secret", found.type, offset + lo, offset + hi)
        offset += len(line)


def _pii_spans(text: str, regions: tuple[str, ...]) -> Iterator[Finding]:
    for m in _EMAIL.finditer(text):
        yield Finding("pii", "email", m.start(), m.end())
    for m in _SSN.finditer(text):
        if ssn.is_valid(m.group()):
            yield Finding("pii", "ssn", m.start(), m.end())
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            yield Finding("pii", "card", m.start(), m.end())
    if "+" not in text and len(_DIGIT.findall(text)) < _PHONE_MIN_DIGITS:
        return  # no match could pass the rule below: skip libphonenumber
    for region in regions:
        for match in phonenumbers.PhoneNumberMatcher(text, region):
            # A bare figure ("3100100 euros") can pass for a local number: a phone needs
            # its area code (10+ digits) or an international "+".
            raw = match.raw_string
            if raw.startswith("+") or len(_DIGIT.findall(raw)) >= _PHONE_MIN_DIGITS:
                yield Finding("pii", "phone", match.start, match.end)


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


class WriteFirewall:
    def __init__(
        self,
        secrets: Action = Action.BLOCK,
        pii: Action = Action.REDACT,
        phone_regions: tuple[str, ...] = ("US",),
    ) -> None:
        self.secrets = secrets
        self.pii = pii
        self.phone_regions = phone_regions

    def screen(self, text: str) -> Screened:
        return self.screen_many([text])[0]

    def screen_many(self, texts: list[str]) -> list[Screened]:
        return self.screen_request(texts, [])[0]

    def screen_request(
        self, texts: list[str], names: list[str]
    ) -> tuple[list[Screened], dict[str, list[str]]]:
        """Each text screened, and the names (user ids, workspaces, projects, episodes)
        that carry a secret, with its kinds; detect-secrets is set up once for all. A name
        is an identifier, never rewritten, so any secret in one blocks the write unless
        secrets are allowed; PII is fine there (a user id may be an e-mail address)."""
        if self.secrets is Action.ALLOW:
            return [self._screen(t) for t in texts], {}
        with _detecting():
            screened = [self._screen(t) for t in texts]
            bad: dict[str, list[str]] = {}
            for name in names:
                kinds = sorted({f.kind for f in _secret_spans(name)})
                if kinds:
                    bad[name] = kinds
        return screened, bad

    def _screen(self, text: str) -> Screened:
        found: list[Finding] = []
        if self.secrets is not Action.ALLOW:
            found += _secret_spans(text)
        if self.pii is not Action.ALLOW:
            found += _pii_spans(text, self.phone_regions)
        if not found:
            return Screened(text)
        action = {"secret": self.secrets, "pii": self.pii}
        blocked = [f for f in found if action[f.category] is Action.BLOCK]
        if blocked:
            return Screened(text, blocked=_merge(blocked))
        spans = _merge(found)
        out, at = [], 0
        for f in spans:
            out += [text[at : f.start], _label(f)]
            at = f.end
        out.append(text[at:])
        return Screened("".join(out), redacted=spans)
