"""Scope governance and the capture gate as pure functions (pcm_common.domain.governance,
pcm_common.domain.capture)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from pcm_common.domain.capture import predictable
from pcm_common.domain.governance import (
    CapEntry,
    CaptureMode,
    Policy,
    ScopeRef,
    admits,
    chain,
    effective,
    expired,
    last_stated,
    over_cap,
    scope_key,
)
from pcm_common.domain.memory import Scope, Source

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_narrowest_policy_wins_per_field() -> None:
    policies = {
        "global": Policy(capture_mode=CaptureMode.MANUAL_ONLY, retention_days=365),
        "workspace:acme": Policy(max_memories=500),
        "project:api": Policy(capture_mode=CaptureMode.ALL, retention_days=30),
    }
    e = effective(policies, "project", "acme", "api")
    assert (e.capture_mode, e.retention_days, e.max_memories) == (CaptureMode.ALL, 30, 500)
    # Another project of the workspace inherits the workspace's cap and global's others.
    e = effective(policies, "project", "acme", "web")
    assert (e.capture_mode, e.retention_days, e.max_memories) == (
        CaptureMode.MANUAL_ONLY,
        365,
        500,
    )
    # A global memory sees only the global policy.
    e = effective(policies, "global", "", "")
    assert (e.capture_mode, e.retention_days, e.max_memories) == (
        CaptureMode.MANUAL_ONLY,
        365,
        None,
    )
    # Nothing set: capture everything, keep forever, no cap.
    e = effective({}, "project", "acme", "api")
    assert (e.capture_mode, e.retention_days, e.max_memories) == (CaptureMode.ALL, None, None)


def test_chain_names_the_scopes_a_memory_belongs_to() -> None:
    assert chain("project", "acme", "api") == ["project:api", "workspace:acme", "global"]
    assert chain("project", "", "api") == ["project:api", "global"]
    assert chain("workspace", "acme", "") == ["workspace:acme", "global"]
    # A global memory stored with names is still global only.
    assert chain("global", "acme", "api") == ["global"]


@pytest.mark.parametrize(
    ("mode", "source", "kept"),
    [
        (CaptureMode.ALL, Source.HOOK, True),
        (CaptureMode.ALL, Source.API, True),
        (CaptureMode.MANUAL_ONLY, Source.HOOK, False),
        (CaptureMode.MANUAL_ONLY, Source.MCP, True),
        (CaptureMode.MANUAL_ONLY, Source.API, True),
        (CaptureMode.HOOKS_ONLY, Source.HOOK, True),
        (CaptureMode.HOOKS_ONLY, Source.API, False),
        (CaptureMode.HOOKS_ONLY, Source.IMPORT, False),
        # The service's own episode records are not captures.
        (CaptureMode.HOOKS_ONLY, Source.CONSOLIDATION, True),
        (CaptureMode.MANUAL_ONLY, Source.CONSOLIDATION, True),
    ],
)
def test_capture_modes(mode: CaptureMode, source: Source, kept: bool) -> None:
    assert admits(mode, source) is kept


def test_retention_counts_from_when_a_memory_was_last_stated() -> None:
    created = NOW - timedelta(days=90)
    repeat = (NOW - timedelta(days=3)).isoformat()
    edit = (NOW - timedelta(days=40)).isoformat()
    assert last_stated(created, [], []) == created
    assert last_stated(created, [repeat], [edit, None, "garbled"]) == NOW - timedelta(days=3)
    assert not expired(last_stated(created, [repeat], []), 30, NOW)
    assert expired(last_stated(created, [], [edit]), 30, NOW)
    # A naive date (written without a zone) is UTC.
    assert last_stated(created, ["2026-05-31T00:00:00"], []) == datetime(2026, 5, 31, tzinfo=UTC)


def test_stray_names_do_not_make_a_scope_of_their_own() -> None:
    assert scope_key("global", "acme", "api") == ("global", "", "")
    assert scope_key("workspace", "acme", "api") == ("workspace", "acme", "")
    assert scope_key("project", "acme", "api") == ("project", "acme", "api")


def test_retention() -> None:
    assert expired(NOW - timedelta(days=31), 30, NOW)
    assert not expired(NOW - timedelta(days=29), 30, NOW)
    assert not expired(NOW - timedelta(days=10_000), None, NOW)


def test_cap_archives_the_weakest_then_the_oldest_and_never_a_pin() -> None:
    entries = [
        CapEntry("strong", 0.9, 1.0, False),
        CapEntry("weak-old", 0.1, 1.0, False),
        CapEntry("weak-new", 0.1, 2.0, False),
        CapEntry("pin", 0.05, 0.0, True),
    ]
    assert over_cap(entries, 4) == []
    assert over_cap(entries, 3) == ["weak-old"]
    assert over_cap(entries, 2) == ["weak-old", "weak-new"]
    # More pins than the cap: every unpinned memory goes, the pin stays.
    assert over_cap(entries, 0 + 1) == ["weak-old", "weak-new", "strong"]
    assert over_cap(entries, None) == []


@given(
    st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), max_size=40),
    st.integers(1, 50),
)
def test_cap_leaves_at_most_cap_or_only_pins(rows: list[tuple[float, bool]], cap: int) -> None:
    entries = [CapEntry(str(i), s, float(i), p) for i, (s, p) in enumerate(rows)]
    gone = set(over_cap(entries, cap))
    left = [e for e in entries if e.memory_id not in gone]
    pins = sum(e.pinned for e in entries)
    assert len(left) == max(min(len(entries), cap), pins)
    assert not any(e.pinned for e in entries if e.memory_id in gone)
    # Whatever stays unpinned is at least as strong as whatever went.
    if gone and any(not e.pinned for e in left):
        assert min(e.strength for e in left if not e.pinned) >= max(
            e.strength for e in entries if e.memory_id in gone
        )


def test_scope_refs_name_what_their_scope_needs() -> None:
    assert ScopeRef().key == "global"
    assert ScopeRef(scope=Scope.WORKSPACE, workspace="acme").key == "workspace:acme"
    assert ScopeRef(scope=Scope.PROJECT, project="api").key == "project:api"
    assert ScopeRef.from_key("project:api") == ScopeRef(scope=Scope.PROJECT, project="api")
    for bad in (
        {"scope": "project"},
        {"scope": "workspace"},
        {"scope": "global", "project": "api"},
        {"scope": "project", "project": "api", "workspace": "acme"},
    ):
        with pytest.raises(ValidationError):
            ScopeRef.model_validate(bad)
    with pytest.raises(ValidationError):
        Policy(retention_days=0)
    with pytest.raises(ValidationError):
        Policy.model_validate({"capture_mode": "sometimes"})
    assert Policy().is_empty() and not Policy(max_memories=3).is_empty()


@pytest.mark.parametrize(
    "text",
    [
        "sounds good",
        "Sounds good!",
        "ok thanks",
        "yes please",
        "go ahead",
        "try again",
        "looks good, ship it",
        "continue",
        "lgtm 👍",
        "👍",
        "hmm ok",
        "Perfect, thanks!",
    ],
)
def test_gate_skips_predictable_captures(text: str) -> None:
    assert predictable(text)


@pytest.mark.parametrize(
    "text",
    [
        "I'm migrating from Python to Rust",
        "yes, use port 8443",  # a figure
        "go ahead with Postgres",  # a name outside the steering words
        "Never push on Fridays",
        "ok so the deploy failed because the staging token expired yesterday",
        "yes yes yes yes yes yes yes yes yes",  # longer than a reply
        "Никогда не деплой по пятницам",  # words of another script are words
        "本番環境には金曜日にデプロイしない",
        "Ça marche, on déploie jeudi",
    ],
)
def test_gate_keeps_what_carries_something(text: str) -> None:
    assert not predictable(text)
