"""What a write request does with each item (`pcm_ingest.plan.plan_writes`), decided from
what the stores hold: a table of requests and the decisions they must get."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from pcm_ingest.plan import (
    CopyKey,
    Twin,
    WriteDecision,
    WriteItem,
    fresh_items,
    plan_writes,
)

MIN_COS = 0.94


def vec(angle: float) -> list[float]:
    """A unit vector at `angle` radians from (1, 0, 0): cos(angle) to it."""
    return [math.cos(angle), math.sin(angle), 0.0]


SAME = vec(0.0)
NEAR = vec(0.2)  # cos 0.980 to SAME: a near duplicate
FAR = vec(0.5)  # cos 0.878: another memory


def item(
    text: str,
    *,
    user: str = "u1",
    scope: str = "global",
    workspace: str = "",
    project: str = "",
    figures: str = "",
    vector: list[float] | None = SAME,
    memory_id: str | None = None,
    hash_of: str | None = None,
) -> WriteItem:
    """An item; its copy key's hash is its text's (or `hash_of`'s: an exact copy)."""
    key: CopyKey = (f"h:{hash_of or text}", user, scope, workspace, project)
    return WriteItem(key, text, figures, memory_id, vector)


@dataclass
class Case:
    items: list[WriteItem]
    want: list[WriteDecision]
    stored: dict[CopyKey, str] = field(default_factory=dict)
    twins: dict[int, Twin | None] = field(default_factory=dict)


A = "Ran 5k in 27:10 this morning along the river."
A2 = "Ran 5k in 27:10 this morning along the river!"
B = "Lars waters the ferns on Sundays."

CASES = {
    "a new text is created": Case([item(A)], [WriteDecision(0, "created")]),
    "a keyed write's new memory gets the plan's id": Case(
        [item(A, memory_id="m-plan")], [WriteDecision(0, "created", memory_id="m-plan")]
    ),
    "an exact copy of a stored memory reinforces it": Case(
        [item(A)],
        [WriteDecision(0, "reinforced", memory_id="m1")],
        stored={item(A).key: "m1"},
    ),
    "every copy of a stored memory reinforces it": Case(
        [item(A), item(A)],
        [
            WriteDecision(0, "reinforced", memory_id="m1"),
            WriteDecision(1, "reinforced", memory_id="m1"),
        ],
        stored={item(A).key: "m1"},
    ),
    "a retry finds what its first try stored: created again, nothing reinforced": Case(
        [item(A, memory_id="m1")],
        [WriteDecision(0, "created", memory_id="m1", replayed=True)],
        stored={item(A).key: "m1"},
    ),
    "a copy later in the request reinforces the first": Case(
        [item(A), item(B, vector=FAR), item(A)],
        [
            WriteDecision(0, "created"),
            WriteDecision(1, "created"),
            WriteDecision(2, "reinforced", first=0),
        ],
    ),
    "a near duplicate of a stored memory is merged into it": Case(
        [item(A2)],
        [WriteDecision(0, "merged", memory_id="m1")],
        twins={0: Twin("m1", 0.98, A)},
    ),
    "a stored twin at exactly the threshold merges": Case(
        [item(A2)],
        [WriteDecision(0, "merged", memory_id="m1")],
        twins={0: Twin("m1", MIN_COS, A)},
    ),
    "a twin below the threshold is another memory": Case(
        [item(A2)], [WriteDecision(0, "created")], twins={0: Twin("m1", 0.93, A)}
    ),
    "a twin naming someone else is another event": Case(
        [item(A2)],
        [WriteDecision(0, "created")],
        twins={0: Twin("m1", 0.99, "Ran 5k in 27:10 this morning along the river with Ana.")},
    ),
    "a near duplicate later in the request merges into the first": Case(
        [item(A), item(A2, vector=NEAR)],
        [WriteDecision(0, "created"), WriteDecision(1, "merged", first=0)],
    ),
    "near duplicates stating other figures are both kept": Case(
        [item(A, figures="27:10|5k"), item(A2, vector=NEAR, figures="41:30|5k")],
        [WriteDecision(0, "created"), WriteDecision(1, "created")],
    ),
    "a later item far from the first is kept": Case(
        [item(A), item(A2, vector=FAR)],
        [WriteDecision(0, "created"), WriteDecision(1, "created")],
    ),
    "an item merged into a stored twin is no batch twin's first": Case(
        [item(A), item(A2, vector=NEAR)],
        [WriteDecision(0, "merged", memory_id="m1"), WriteDecision(1, "created")],
        twins={0: Twin("m1", 0.99, A2)},
    ),
    "one user's stored text never reinforces another user's write": Case(
        [item(A, user="u2")], [WriteDecision(0, "created")], stored={item(A).key: "m1"}
    ),
    "the same text of two users in one request: two memories": Case(
        [item(A, user="u1"), item(A, user="u2"), item(A2, user="u3", vector=NEAR)],
        [WriteDecision(0, "created"), WriteDecision(1, "created"), WriteDecision(2, "created")],
    ),
    "a write without a user is not a copy of a user's memory": Case(
        [item(A, user="")], [WriteDecision(0, "created")], stored={item(A).key: "m1"}
    ),
    "a project's text never reinforces a global memory": Case(
        [item(A, scope="project", workspace="w", project="p")],
        [WriteDecision(0, "created")],
        stored={item(A).key: "m1"},
    ),
    "two projects' near duplicates in one request: both kept": Case(
        [
            item(A, scope="project", workspace="w", project="p1"),
            item(A2, scope="project", workspace="w", project="p2", vector=NEAR),
        ],
        [WriteDecision(0, "created"), WriteDecision(1, "created")],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_plan(name: str) -> None:
    case = CASES[name]
    got = plan_writes(case.items, case.stored, case.twins, min_cos=MIN_COS)
    assert got == case.want


def test_only_items_without_an_exact_copy_are_embedded() -> None:
    items = [item(A), item(B), item(A), item(A2)]
    assert fresh_items(items, {item(B).key: "m1"}) == [0, 3]


def test_a_new_item_without_its_vector_cannot_be_planned() -> None:
    with pytest.raises(ValueError, match="vector"):
        plan_writes([item(A), item(B, vector=None)], {}, {}, min_cos=MIN_COS)


def test_copies_need_no_vector() -> None:
    """Exact copies (stored or earlier in the request) are decided without one."""
    items = [item(A), item(A, vector=None), item(B, vector=None)]
    got = plan_writes(items, {item(B).key: "m1"}, {}, min_cos=MIN_COS)
    assert got == [
        WriteDecision(0, "created"),
        WriteDecision(1, "reinforced", first=0),
        WriteDecision(2, "reinforced", memory_id="m1"),
    ]
