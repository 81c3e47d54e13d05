"""Secret detectors over a view's ASCII text (`views.View.text`), each linear in its length.

- Yelp's detect-secrets plugins that look for a known credential shape (cloud keys, tokens
  of GitHub, GitLab, Slack, Stripe, npm, PyPI, private key headers, JWTs, passwords in
  URLs, ...): their own patterns, run by RE2. A few use lookarounds, which RE2 lacks; those
  get the neighbouring character consumed instead (`_for_re2`), which finds the same keys.
  Its entropy plugins are left out: on prose they flag ordinary words
  (docs/decisions/0041-secret-entropy-plugins-off.md).
- detect-secrets' keyword detector (`password: ...`, `api_key = "..."`, `secret => '...'`)
  in its config-file form (values with or without quotes) and its code form, run anchored
  at each of its keywords that is followed by an assignment, on the rest of that line (at
  most 240 characters): its patterns backtrack, so the bound caps their cost.
- Shapes detect-secrets 1.5 does not know (`_SHAPES`): current token formats of other
  vendors, whole PEM blocks, authorization headers, environment lines (`API_KEY=...`),
  Azure SAS signatures, `.npmrc` auth tokens, and passwords stated in prose.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import re2
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters.heuristic import is_indirect_reference, is_templated_secret
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    DENYLIST,
    PRECEDED_BY_EQUAL_COMPARISON_SIGNS_QUOTES_REQUIRED_REGEX,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
)

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
KEYWORD_KIND = "Secret Keyword"  # detect-secrets' KeywordDetector.secret_type


class Hit(NamedTuple):
    """(A tuple: a text of 15,000 findings makes them by the thousand.)"""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Shape:
    kind: str
    pattern: re2._Regexp
    # Where a match needs more than its shape to count (a decoded value, a password's look).
    check: Callable[[str], bool] | None = None
    group: int = 0  # the part of a match that is the secret
    # Words (lower case) one of which any match holds: a text with none is not scanned.
    # (A substring test costs microseconds, RE2's pass over 100 kB ~0.2 ms a shape.)
    needs: tuple[str, ...] = ()


def compile_re2(pattern: str, *, ignore_case: bool = False) -> re2._Regexp:
    """An RE2 pattern: matching time linear in the text, whatever the pattern."""
    options = re2.Options()
    options.log_errors = False  # a pattern RE2 cannot take raises; no stderr noise
    options.case_sensitive = not ignore_case
    return re2.compile(pattern, options)


_LOOKBEHIND_START = r"(?:(?<=\W)|(?<=^))"
_NEGATIVE_LOOKAHEAD = re.compile(r"\(\?!(\\w|\[[^\]]*\])\)")
_LONG_REPEAT = re.compile(r"\{(\d+),(\d{4,})\}")
_RE2_MAX_REPEAT = 1000


def _negated(char_class: str) -> str:
    return r"\W" if char_class == r"\w" else "[^" + char_class[1:]


def _for_re2(pattern: str) -> str:
    """A detect-secrets pattern in RE2's syntax: "preceded by a non-word character or the
    start" and "not followed by X" consume that character instead of looking at it (the
    span may take in one separator, which the firewall trims), and repeats stop at RE2's
    limit of 1000."""
    pattern = pattern.replace(_LOOKBEHIND_START, r"(?:^|\W)")
    pattern = _NEGATIVE_LOOKAHEAD.sub(lambda m: f"(?:{_negated(m[1])}|$)", pattern)
    return _LONG_REPEAT.sub(lambda m: f"{{{m[1]},{_RE2_MAX_REPEAT}}}", pattern)


def _plugin_shapes() -> list[Shape]:
    plugins: list[type] = list(get_mapping_from_secret_type_to_class().values())
    classes: dict[str, type] = {c.__name__: c for c in plugins}
    shapes = []
    for name in SECRET_PLUGINS:
        plugin = classes[name]()
        if not isinstance(plugin, RegexBasedDetector):
            raise TypeError(f"{name} is not a pattern plugin")
        for p in plugin.denylist:
            if p.flags & re.VERBOSE and any(c.isspace() or c == "#" for c in p.pattern):
                raise ValueError(f"{name}: verbose patterns are not translated for RE2")
            ignore_case = bool(p.flags & re.IGNORECASE)
            shapes.append(
                Shape(plugin.secret_type, compile_re2(_for_re2(p.pattern), ignore_case=ignore_case))
            )
    return shapes


def _decodes_to_credentials(value: str) -> bool:
    """`Basic <base64>` is a credential when the base64 decodes to "user:password"."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii()


_TRAILING = ".,;:!?)]}'\"`"
_PLACEHOLDERS = frozenset(
    {"none", "null", "nil", "true", "false", "empty", "redacted", "hidden", "secret", "xxxx"}
)


_NOT_A_WORD = re.compile(r"[^A-Za-z]|.[A-Z]")  # a digit or symbol, or a capital inside


def _looks_like_password(value: str) -> bool:
    """A word stated as a password in prose counts when it is not a plain word: it has a
    digit, a symbol or a capital inside ("hunter2", "Tr0ub4dor&3"); "the password is on
    the fridge" names no password."""
    token = value.rstrip(_TRAILING)
    if len(token) < 4 or not _NOT_A_WORD.search(token):
        return False
    return token.lower() not in _PLACEHOLDERS and not is_templated_secret(token)


def _shape(
    kind: str,
    pattern: str,
    *,
    ignore_case: bool = False,
    check: Callable[[str], bool] | None = None,
    group: int = 0,
    needs: tuple[str, ...] = (),
) -> Shape:
    return Shape(kind, compile_re2(pattern, ignore_case=ignore_case), check, group, needs)


# Names in environment lines and config keys that say the value is a credential.
_SECRET_NAME = (
    r"(?:API_?KEY|ACCESS_?KEY|AUTH_?KEY|AUTH_?TOKEN|TOKEN|SECRET(?:_?KEY)?|PASSWORD|PASSWD|"
    r"PWD|PRIVATE_?KEY|CLIENT_?SECRET|CREDENTIALS?|SAS_?TOKEN|WEBHOOK_?SECRET)"
)
_SHAPES: tuple[Shape, ...] = (
    # The whole PEM block (detect-secrets marks only its BEGIN line): redaction must not
    # leave the key's body behind.
    _shape(
        "Private Key",
        r"-----BEGIN[A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END[A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\z)",
        needs=("private key",),
    ),
    _shape("Anthropic API Key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", needs=("sk-ant-",)),
    _shape("OpenAI API Key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}", needs=("sk-",)),
    _shape("Google API Key", r"\bAIza[0-9A-Za-z_-]{35}\b", needs=("aiza",)),
    _shape("Google OAuth Client Secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}\b", needs=("gocspx-",)),
    _shape("Google OAuth Access Token", r"\bya29\.[0-9A-Za-z_-]{30,}", needs=("ya29.",)),
    _shape(
        "GitHub Fine-Grained Token", r"\bgithub_pat_[A-Za-z0-9_]{50,255}", needs=("github_pat_",)
    ),
    _shape("Hugging Face Token", r"\bhf_[A-Za-z0-9]{30,40}\b", needs=("hf_",)),
    _shape("npm Token", r"\bnpm_[A-Za-z0-9]{36}\b", needs=("npm_",)),
    _shape(
        "npm Auth Token",
        r":_auth(?:Token)?\s{0,4}=\s{0,4}[^\s$\"'{<][^\s\"']{7,}",
        needs=(":_auth",),
    ),
    _shape("Slack App Token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", needs=("xapp-",)),
    _shape(
        "Slack Webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,}",
        needs=("hooks.slack.com/",),
    ),
    _shape(
        "Stripe Key", r"\b(?:sk|rk|pk)_(?:test|live)_[0-9a-zA-Z]{24,}", needs=("_test_", "_live_")
    ),
    _shape("Stripe Webhook Secret", r"\bwhsec_[A-Za-z0-9]{32,}", needs=("whsec_",)),
    _shape(
        "Shopify Token",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        needs=("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    _shape("DigitalOcean Token", r"\bdo[por]_v1_[a-f0-9]{64}\b", needs=("_v1_",)),
    _shape(
        "HashiCorp Vault Token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", needs=("hvs.", "hvb.", "hvr.")
    ),
    _shape(
        "Terraform Cloud Token",
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        needs=(".atlasv1.",),
    ),
    _shape(
        "Doppler Token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b", needs=("dp.",)
    ),
    _shape("Databricks Token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", needs=("dapi",)),
    _shape("Linear API Key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", needs=("lin_",)),
    _shape(
        "Notion Token",
        r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\b",
        needs=("secret_", "ntn_"),
    ),
    _shape("Postman API Key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", needs=("pmak-",)),
    _shape(
        "New Relic Key", r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{27}\b", needs=("nrak-", "nrii-", "nrjs-")
    ),
    _shape("Docker Hub Token", r"\bdckr_pat_[A-Za-z0-9_-]{27}\b", needs=("dckr_pat_",)),
    _shape(
        "Grafana Token",
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}",
        needs=("glsa_", "glc_"),
    ),
    _shape("Supabase Token", r"\bsbp_[a-f0-9]{40}\b", needs=("sbp_",)),
    _shape(
        "PlanetScale Token",
        r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}\b",
        needs=("pscale_",),
    ),
    _shape("Fly.io Token", r"\bfo1_[A-Za-z0-9_-]{43}\b", needs=("fo1_",)),
    _shape("Pulumi Token", r"\bpul-[a-f0-9]{40}\b", needs=("pul-",)),
    _shape("RubyGems Key", r"\brubygems_[a-f0-9]{48}\b", needs=("rubygems_",)),
    _shape(
        "Age Secret Key",
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
        needs=("age-secret-key-1",),
    ),
    _shape("Mailgun Key", r"\bkey-[a-f0-9]{32}\b", needs=("key-",)),
    _shape("Atlassian API Token", r"\bATATT3[A-Za-z0-9_=-]{150,}", needs=("atatt3",)),
    _shape("Figma Token", r"\bfigd_[A-Za-z0-9_-]{40}\b", needs=("figd_",)),
    _shape(
        "Sentry Token",
        r"\b(?:sntrys_[A-Za-z0-9+/=_-]{50,}|sntryu_[a-f0-9]{64}\b)",
        needs=("sntrys_", "sntryu_"),
    ),
    _shape(
        "Discord Webhook",
        r"https://discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}",
        needs=("discord",),
    ),
    _shape("Azure SAS Signature", r"[?&;]sig=[A-Za-z0-9%+/=]{30,}", needs=("sig=",)),
    _shape(
        "Azure Shared Access Key",
        r"\bSharedAccessKey\s{0,2}=\s{0,2}[A-Za-z0-9+/=]{30,}",
        ignore_case=True,
        needs=("sharedaccesskey",),
    ),
    _shape(
        "Authorization Header",
        r"\bauthorization[\"']?\s{0,4}[:=]\s{0,4}[\"']?(?:bearer|token|bot|digest|apikey|sso-key)"
        r"\s{1,4}[A-Za-z0-9._~+/=:-]{8,}",
        ignore_case=True,
        needs=("authorization",),
    ),
    _shape(
        "Bearer Token",
        r"\bbearer\s{1,4}[A-Za-z0-9._~+/-]{20,}=*",
        ignore_case=True,
        needs=("bearer",),
    ),
    _shape(
        "Basic Auth Header",
        r"\bbasic\s{1,4}([A-Za-z0-9+/]{8,}={0,2})",
        ignore_case=True,
        check=_decodes_to_credentials,
        group=1,
        needs=("basic",),
    ),
    _shape(
        "Secret Assignment",
        r"\b(?:[A-Z][A-Z0-9]*_)*" + _SECRET_NAME + r"(?:_[A-Z0-9]+)*[\"']?\s{0,3}[=:]\s{0,3}"
        r"[\"']?[^\s\"'$<{][^\s\"']{5,}",
        needs=("key", "token", "secret", "passw", "pwd", "credential"),
    ),
    _shape(
        "Password In Prose",
        r"\b(?:password|passwd|passcode|passphrase|pwd|pin(?: code)?|wi-?fi key)"
        r"(?: for [A-Za-z0-9 ._-]{1,40}?)?\s{1,3}(?:is|was|are|=|:|->)\s{1,3}[\"']?(\S{4,64})",
        ignore_case=True,
        check=_looks_like_password,
        group=1,
        needs=("pass", "pwd", "pin", "fi key"),
    ),
)
_PLUGIN_SHAPES = tuple(_plugin_shapes())

# Keyword detector: a denylisted word (detect-secrets' list) followed by an assignment
# (Python's `re`: a text can hold thousands, and every repeat here is bounded);
# detect-secrets' own patterns then read the value, anchored at the keyword and stopped at
# the line's end or `_VALUE_CHARS` (they backtrack: the bound caps them).
# (Run on the lower-cased text, same positions: IGNORECASE made it 4 times slower.)
_KEYWORD_ANCHOR = re.compile(
    r"(?:" + "|".join(DENYLIST) + r")\w{0,40}[\]'\"]{0,2}\s{0,8}(?::=|=>|[:=!]{1,3}|\()"
)
# (Its pattern for a quoted value before `==` is for code comparisons, not for notes.)
_KEYWORD_PATTERNS = tuple(
    (p, g)
    for p, g in (
        *CONFIG_DENYLIST_REGEX_TO_GROUP.items(),
        *QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items(),
    )
    if p is not PRECEDED_BY_EQUAL_COMPARISON_SIGNS_QUOTES_REQUIRED_REGEX
)
_VALUE_CHARS = 240
_KEYWORDS_READ = 128  # per text; past it (a degenerate text) a cheaper look at the value
_LOOK_BACK = 80  # a line start further back than this is no line start
_PASSWORD_WORDS = ("pass", "pwd", "contrase")
_KEY_CHARS = "_-.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _first_word(value: str) -> str:
    words = value.split(maxsplit=1)
    return words[0].rstrip(_TRAILING) if words else ""


def _starts_line(text: str, at: int) -> bool:
    """Whether the key at `text[at:]` starts its line (`password: x`, `  db_pwd = x`,
    `export API_KEY=x`) rather than standing in running text."""
    head = text[max(0, at - _LOOK_BACK) : at]
    before = head[head.rfind("\n") + 1 :].rstrip(_KEY_CHARS)
    return before.strip(" \t-#/*{[\"',") in ("", "export", "set")


def _value_counts(text: str, at: int, value: str, assignment: str) -> bool:
    """A keyword's value counts unless it is a template or a reference to something else
    (detect-secrets' own filters) or too short. Unless the line starts with a password's
    key (`password: hunter2`, `db_pwd = x`), it must look like a password: "Secret:
    practice every day" is prose."""
    first = _first_word(value)
    if len(first) < 4 or first.lower() in _PLACEHOLDERS or is_templated_secret(first):
        return False
    if is_indirect_reference(assignment):
        return False
    key = text[at : at + 40].lower()
    if any(w in key for w in _PASSWORD_WORDS) and _starts_line(text, at):
        return True
    return _looks_like_password(first)


def _keyword_value(text: str, at: int, stop: int) -> tuple[int, int] | None:
    for pattern, group in _KEYWORD_PATTERNS:
        m = pattern.match(text, at, stop)
        if m and m.group(group) and _value_counts(text, at, m.group(group), m.group()):
            return m.span(group)
    return None


def _bare_value(text: str, at: int, stop: int) -> tuple[int, int] | None:
    value = text[at:stop].lstrip(" \t\"'")
    first = _first_word(value)
    if not _looks_like_password(first):
        return None
    start = stop - len(value)
    return start, start + len(first)


def _keyword_hits(text: str, lowered: str, first_only: bool) -> Iterator[Hit]:
    skip_to, read = 0, 0
    for anchor in _KEYWORD_ANCHOR.finditer(lowered):
        at = anchor.start()
        if at < skip_to:
            continue  # inside the value found before
        line_end = text.find("\n", at, at + _VALUE_CHARS)
        stop = line_end if line_end >= 0 else min(len(text), at + _VALUE_CHARS)
        read += 1
        if read <= _KEYWORDS_READ:
            span = _keyword_value(text, at, stop)
        else:
            span = _bare_value(text, anchor.end(), stop)
        if span:
            yield Hit(KEYWORD_KIND, *span)
            if first_only:
                return
            skip_to = span[1]


def _shape_hits(
    text: str, lowered: str, shapes: tuple[Shape, ...], first_only: bool
) -> Iterator[Hit]:
    data = text.encode("ascii")  # RE2 reads bytes without decoding its positions
    for shape in shapes:
        if shape.needs and not any(word in lowered for word in shape.needs):
            continue
        for m in shape.pattern.finditer(data):
            if shape.check is None or shape.check(m.group(shape.group).decode()):
                yield Hit(shape.kind, m.start(shape.group), m.end(shape.group))
                if first_only:
                    break


def secret_hits(text: str, first_only: bool = False) -> list[Hit]:
    """The secrets in `text` (a view's ASCII text), in no particular order. `first_only`:
    one of each kind is enough (the write is refused whatever else it holds)."""
    lowered = text.lower()
    return [
        *_shape_hits(text, lowered, _PLUGIN_SHAPES, first_only),
        *_shape_hits(text, lowered, _SHAPES, first_only),
        *_keyword_hits(text, lowered, first_only),
    ]
