"""The write firewall's screen: secrets blocked, PII redacted, by category actions."""

from __future__ import annotations

import random
import string

import pytest
from pydantic import ValidationError

from pcm_common.firewall import Action, WriteFirewall, pii, secrets
from pcm_common.firewall.views import view_of
from pcm_ingest.settings import IngestSettings
from tests.unit.firewall_corpus import PII as CORPUS_PII
from tests.unit.firewall_corpus import SECRETS as CORPUS_SECRETS
from tests.unit.test_firewall_corpus import PROBE_SHAPES

SECRETS = {
    "AWS Access Key": "my aws key is AKIAIOSFODNN7EXAMPLE",
    "GitHub Token": "push with ghp_1234567890abcdefghijklmnopqrstuvwxyzAB please",
    "Slack Token": "bot token xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
    "Private Key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY",
    "Secret Keyword": "password = 'hunter2hunter2'",
    "Basic Auth Credentials": "db at postgres://admin:s3cretpass@db.example.com/prod",
    "Anthropic API Key": "use sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 for claude",
    "Secret Assignment": "export OPENAI_API_KEY=sk-proj-abcdEFGHijklMNOPqrstUVWXyz0123456789",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secrets_are_blocked(kind: str) -> None:
    screened = WriteFirewall().screen(SECRETS[kind])
    assert kind in {f.kind for f in screened.blocked}
    assert screened.text == SECRETS[kind]  # a blocked text is not stored at all


def test_pii_is_redacted_by_kind() -> None:
    text = (
        "Call Bob at (415) 555-2671 or bob@example.com; SSN 123-45-6789, card 4111 1111 1111 1111."
    )
    screened = WriteFirewall().screen(text)
    assert not screened.blocked
    assert screened.text == (
        "Call Bob at [REDACTED_PHONE] or [REDACTED_EMAIL]; "
        "SSN [REDACTED_SSN], card [REDACTED_CARD]."
    )
    assert [f.kind for f in screened.redacted] == ["phone", "email", "ssn", "card"]


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("text me on +44 20 7946 0958 tonight", "+44 20 7946 0958"),
        ("office line 415.555.2671, ask for Ann", "415.555.2671"),
        ("call 212 555 0147 x3 after 9", "212 555 0147 x3"),  # with its extension
    ],
)
def test_phones_with_a_plus_or_an_area_code_are_found(text: str, phone: str) -> None:
    """The digit count that lets most texts skip libphonenumber must not skip these."""
    screened = WriteFirewall(phone_regions=("US", "GB")).screen(text)
    assert [f.kind for f in screened.redacted] == ["phone"]
    assert screened.text == text.replace(phone, "[REDACTED_PHONE]")


@pytest.mark.parametrize(
    "text",
    [
        "Ran 5k in 27:10 this morning along the river.",
        "The meeting moved to room 4B at 10:30 on 2024-03-05.",
        "Order 4111 1111 1111 1112 failed its checksum.",  # not a valid card number
        "Rent of 724720 is due on the 11th; Lena pays it from the joint account.",
        "666-12-3456 is not a social security number.",
        "We agreed with Acme to pay 3100100 euros per month for the support plan.",
    ],
)
def test_ordinary_text_passes_untouched(text: str) -> None:
    screened = WriteFirewall().screen(text)
    assert screened.text == text and not screened.blocked and not screened.redacted


def test_actions_per_category() -> None:
    text = "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB, mail ann@example.org"
    redact_all = WriteFirewall(secrets=Action.REDACT, pii=Action.REDACT).screen(text)
    assert redact_all.text == "token [REDACTED_SECRET] mail [REDACTED_EMAIL]"
    allow_all = WriteFirewall(secrets=Action.ALLOW, pii=Action.ALLOW).screen(text)
    assert allow_all.text == text and not allow_all.redacted
    block_pii = WriteFirewall(secrets=Action.ALLOW, pii=Action.BLOCK).screen(text)
    assert [f.kind for f in block_pii.blocked] == ["email"]


def test_findings_name_kinds_and_spans_never_the_text() -> None:
    text = SECRETS["AWS Access Key"]
    (finding,) = WriteFirewall().screen(text).blocked
    assert finding.kind == "AWS Access Key"
    assert text[finding.start : finding.end] == "AKIAIOSFODNN7EXAMPLE"
    assert "AKIA" not in repr(finding)  # what an error or a log line may carry


def test_a_redacted_private_key_leaves_no_body() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    screened = WriteFirewall(secrets=Action.REDACT).screen(f"deploy key:\n{pem}\nthanks")
    assert screened.text == "deploy key:\n[REDACTED_SECRET]\nthanks"


def test_unknown_phone_regions_are_refused() -> None:
    with pytest.raises(ValidationError):
        IngestSettings(firewall_phone_regions=("UK",))
    assert IngestSettings(firewall_phone_regions=("GB", "DE")).firewall_phone_regions == (
        "GB",
        "DE",
    )


# --- the gates that spare most texts a detector never hide a match ----------------------


def _gate_texts() -> list[str]:
    rng = random.Random(7)
    alphabets = (string.printable, string.digits + " -.()+/", string.ascii_letters + "@._-")
    noise = ["".join(rng.choice(a) for _ in range(20_000)) for a in alphabets]
    corpus = [i.text for i in (*CORPUS_SECRETS, *CORPUS_PII)]
    return [view_of(t).text for t in (*corpus, *PROBE_SHAPES.values(), *noise)]


@pytest.fixture(scope="module")
def gate_texts() -> list[str]:
    return _gate_texts()


def test_each_pii_gate_finds_its_pattern_no_later(gate_texts: list[str]) -> None:
    """The gate (RE2) of each PII pattern matches wherever the pattern (Python's `re`)
    does, and first no later, so the scan that starts there misses nothing."""
    checked = set()
    for text in gate_texts:
        data = text.encode()
        for n, kind in enumerate(pii._KINDS):
            first = kind.pattern.search(text)
            if first is not None:
                gate = kind.gate.search(data)
                assert gate is not None and gate.start() <= first.start(), (kind.name, text[:80])
                checked.add(n)
    assert checked == set(range(len(pii._KINDS)))  # the texts hold candidates of every kind


def test_each_key_shape_needs_a_word_its_matches_hold(gate_texts: list[str]) -> None:
    """A key shape is skipped for a text holding none of its words: no text it matches
    lacks them."""
    for text in gate_texts:
        lowered = text.lower()
        for shape in secrets._SHAPES:
            if shape.pattern.search(text.encode()) is not None:
                assert any(word in lowered for word in shape.needs), (shape.kind, text[:80])


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Reading ISBN 978-0-306-40615-7 for the book club.", True),
        ("isbn: 0-306-40615-2 is the first edition", True),
        ("ISBN-13 9780306406157, paperback", True),
        # A wrong check digit, or a phone written after the label, stays redacted.
        ("ISBN 978-0-306-40615-8 (misprinted)", False),
        ("isbn 415-555-2671 call me", False),
    ],
)
def test_a_labelled_book_number_is_no_phone(text: str, kept: bool) -> None:
    screened = WriteFirewall(phone_regions=("US", "GB", "DE", "FR")).screen(text)
    assert (screened.text == text) is kept, screened.text
