"""Loads one split's phrasebook. The wording itself lives only in the split modules."""

from __future__ import annotations

import importlib
import random
import re
from dataclasses import dataclass

SPLITS: tuple[str, ...] = (
    "tune",
    "heldout",
    "valid",
    "blind",
    "blind2",
    "blind3",
    "blind4",
    "blind5",
)
# Splits whose wording may appear only in their own module (and in generated data).
ISOLATED: tuple[str, ...] = ("heldout", "valid", "blind", "blind2", "blind3", "blind4", "blind5")

_CHOICE = re.compile(r"\[([^\[\]]*\|[^\[\]]*)\]")


@dataclass(frozen=True)
class Phrasebook:
    """Entry families, questions, content notes and misc memories of one split."""

    split: str
    families: dict[str, tuple[str, ...]]
    questions: dict[str, tuple[str, ...]]
    notes: dict[str, tuple[str, ...]]
    misc: tuple[str, ...]


def load(split: str) -> Phrasebook:
    """Import ``phrasings_<split>`` and wrap its tables."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    module = importlib.import_module(f"{__package__}.phrasings_{split}")
    return Phrasebook(
        split=split,
        families=dict(module.FAMILIES),
        questions=dict(module.QUESTIONS),
        notes=dict(module.CONTENT_NOTES),
        misc=tuple(module.MISC),
    )


def expand_choices(template: str, rng: random.Random) -> str:
    """Replace every ``[a|b|c]`` group with one of its options."""
    return _CHOICE.sub(lambda match: rng.choice(match.group(1).split("|")), template)


def choice_groups(template: str) -> list[list[str]]:
    """The ``[a|b|c]`` groups of a template, for counting its distinct expansions."""
    return [group.split("|") for group in _CHOICE.findall(template)]
