"""Rendering the PAE slots into the prompt text an agent pastes into its context."""

from __future__ import annotations

from pcm_recall.schemas import AnomalyFlag, ContextItem

FLAGS = "[ANOMALY FLAGS — PAY ATTENTION]"
ASKER = "[ASKER CONTEXT]"
SITUATIONAL = "[SITUATIONAL CONTEXT]"
EMPTY = "No relevant memories found"


def one_line(text: str) -> str:
    """Memory text is data: collapsing it to one line keeps it from forging a slot header."""
    return " ".join(text.split())


def _dated(item: ContextItem) -> str:
    return f"- [{item.created_at:%Y-%m-%d %H:%M}] {one_line(item.text)}"


def render(
    flags: list[AnomalyFlag],
    asker: list[ContextItem],
    situational: list[ContextItem],
    episode: list[ContextItem],
    budget_chars: int,
) -> str:
    lines = [FLAGS]
    lines += [f"- {one_line(f.text)} — {f.differs} (usual: {f.usual})" for f in flags] or ["- none"]
    lines.append(ASKER)
    lines += [f"- {one_line(a.text)}" for a in asker] or ["- none"]
    lines.append(SITUATIONAL)
    if not situational:
        lines.append(EMPTY)
        return "\n".join(lines)
    used = sum(len(x) + 1 for x in lines)
    # Situational items first (best first), then episode neighbours, in time order within
    # each block, until the budget is spent.
    chosen: list[ContextItem] = []
    for item in [*situational, *episode]:
        cost = len(_dated(item)) + 1
        if used + cost > budget_chars and chosen:
            break
        chosen.append(item)
        used += cost
    lines += [_dated(i) for i in sorted(chosen, key=lambda i: i.created_at)]
    return "\n".join(lines)
