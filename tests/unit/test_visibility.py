"""The one visibility rule (`domain.visibility`): the store filter and the in-process check
agree, and grouping never crosses what an asker could tell apart."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pcm_common.domain.filters import Filter, payload_matches
from pcm_common.domain.visibility import audience, owner, peers, same_group

names = st.sampled_from([None, "", "u1", "u2"])
scopes = st.sampled_from(["global", "workspace", "project"])


@st.composite
def memories(draw: st.DrawFn) -> dict[str, Any]:
    """A payload as ingest stores it: workspace and project "" when not named."""
    return {
        "user_id": draw(st.sampled_from([None, "u1", "u2"])),
        "scope": draw(scopes),
        "workspace": draw(st.sampled_from(["", "w1", "w2"])),
        "project": draw(st.sampled_from(["", "p1", "p2"])),
    }


@given(memories(), memories())
def test_store_filter_and_in_process_check_agree(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert payload_matches(Filter(must=peers(a)), b) == same_group(a, b)


@given(memories(), memories(), names, names, names)
def test_a_group_is_seen_whole_or_not_at_all(
    a: dict[str, Any], b: dict[str, Any], user: str | None, ws: str | None, proj: str | None
) -> None:
    """Whatever an asker sees of one memory it sees of every memory grouped with it, so a
    flag or usual pattern built from a group never shows the asker something hidden."""
    if same_group(a, b):
        seen = audience(user or None, ws or None, proj or None)
        assert payload_matches(seen, a) == payload_matches(seen, b)


def test_owners_that_differ_are_never_grouped() -> None:
    base = {"user_id": "u1", "scope": "project", "workspace": "w1", "project": "p1"}
    for field, other in [
        ("user_id", "u2"),
        ("user_id", None),
        ("project", "p2"),
        ("workspace", "w2"),
        ("scope", "global"),
    ]:
        assert not same_group(base, {**base, field: other}), field
    assert same_group(base, dict(base))


def test_names_count_only_where_the_scope_has_them() -> None:
    """A global memory is global whatever workspace it names; memories without a user are
    their own group."""
    assert owner({"scope": "global", "workspace": "w1"}) == ("", "global", "", "")
    assert peers({"scope": "global", "user_id": None}) == {"user_id": None, "scope": "global"}
    assert peers({"scope": "workspace", "workspace": "w1", "project": "p"}) == {
        "user_id": None,
        "scope": "workspace",
        "workspace": "w1",
    }
