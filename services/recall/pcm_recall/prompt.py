"""Rendering the PAE slots into the prompt text an agent pastes into its context."""

from __future__ import annotations

from itertools import groupby

from pcm_common.text.clean import brief, one_line
from pcm_recall.schemas import AnomalyFlag, Association, ContextItem

FLAGS = "[ANOMALY FLAGS — PAY ATTENTION]"
ASKER = "[ASKER CONTEXT]"
SITUATIONAL = "[SITUATIONAL CONTEXT]"
ASSOCIATIONS = "[ASSOCIATIONS]"
EMPTY = "No relevant memories found"


# A flagged memory that the context below quotes in full is named by its opening words
# only (docs/decisions/0025-flags-quote-opening-words.md); one it does not quote is shown
# up to `FLAG_CHARS` (a memory may hold 100,000 characters).
BRIEF_CHARS = 80
FLAG_CHARS = 600
DETAIL_CHARS = 200  # what differs, what is usual: a few words normally
# An association is context around the answer: a line each, cut to this.
ASSOCIATION_CHARS = 300
# Room below which a memory that does not fit is left out rather than cut.
MIN_CUT_CHARS = 200


def item_line(item: ContextItem, limit: int | None = None) -> str:
    """A memory's line (cut to `limit` characters with an ellipsis, if given); an outdated
    one says so (the agent sees what changed and when)."""
    head = f"- {'(superseded) ' if item.state == 'superseded' else ''}"
    # `brief` adds its ellipsis after the cut: one character more than it keeps.
    keep = None if limit is None else max(1, limit - len(head) - 1)
    text = one_line(item.text) if keep is None else brief(item.text, keep)
    return head + text


def flag_line(flag: AnomalyFlag, quoted: bool = False) -> str:
    line = f"- {brief(flag.text, BRIEF_CHARS if quoted else FLAG_CHARS)}"
    if flag.differs:
        line += f" — {brief(flag.differs, DETAIL_CHARS)}"
    if flag.usual:
        line += f" (usual: {brief(flag.usual, DETAIL_CHARS)})"
    return line


def render(
    flags: list[AnomalyFlag],
    asker: list[ContextItem],
    situational: list[ContextItem],
    episode: list[ContextItem],
    budget_chars: int,
    associations: list[Association] | None = None,
) -> str:
    """The prompt and, for associative recall (`associations` not None), its
    `[ASSOCIATIONS]` section after the situational slot (`association_lines`)."""
    prompt = _render(flags, asker, situational, episode, budget_chars)
    if associations is None:
        return prompt
    return "\n".join([prompt, *association_lines(associations)])


def association_lines(associations: list[Association]) -> list[str]:
    """The section: a line per association, the most energetic first (its date, then its
    text cut to `ASSOCIATION_CHARS`), or "- none"."""
    lines = [ASSOCIATIONS]
    for a in associations:
        day = f"{a.created_at.date().isoformat()}: " if a.created_at else ""
        lines.append(f"- {day}{brief(a.text, ASSOCIATION_CHARS)}")
    return lines if associations else [*lines, "- none"]


def _render(
    flags: list[AnomalyFlag],
    asker: list[ContextItem],
    situational: list[ContextItem],
    episode: list[ContextItem],
    budget_chars: int,
) -> str:
    """The prompt, within `budget_chars` unless the pinned memories leave less than
    `MIN_CUT_CHARS` of it: pins are guardrails and always go whole; at most five flags,
    each at most ~1,000 characters; then the best situational items and episode
    neighbours while they fit, one longer than the room left cut to it (the best one is
    always shown, cut to `MIN_CUT_CHARS` at the least)."""
    head = [ASKER, *([f"- {one_line(a.text)}" for a in asker] or ["- none"]), SITUATIONAL]
    full = [FLAGS, *([flag_line(f) for f in flags] or ["- none"]), *head]
    if not situational:
        return "\n".join([*full, EMPTY])
    # The flags' cost is not known before the context is chosen (a flag quoting a chosen
    # memory is brief): budget them at full length, which can only leave room unused.
    used = sum(len(x) + 1 for x in full)
    # Best situational items first, then episode neighbours, until the budget is spent;
    # a day's date costs its own line once (cheaper than a date on every memory).
    chosen: list[tuple[ContextItem, str]] = []
    days: set[str] = set()
    pinned = {a.memory_id for a in asker}  # shown whole above: not twice in the prompt
    for item in [*situational, *episode]:
        if item.memory_id in pinned:
            continue
        day = item.created_at.date().isoformat()
        dated = 0 if day in days else len(day) + 2
        line = item_line(item)
        if used + len(line) + 1 + dated > budget_chars:
            room = budget_chars - used - 1 - dated
            if chosen and room < MIN_CUT_CHARS:
                break
            line = item_line(item, max(room, MIN_CUT_CHARS))
        chosen.append((item, line))
        days.add(day)
        used += len(line) + 1 + dated
    quoted = {i.memory_id for i, _ in chosen}
    lines = [FLAGS, *([flag_line(f, f.memory_id in quoted) for f in flags] or ["- none"])]
    lines += head
    if not chosen:  # every relevant memory is a pin, shown above
        lines.append("- none beyond the asker context")
    chosen.sort(key=lambda c: (c[0].created_at, c[0].seq))
    # ISO dates (strftime's %Y drops the leading zeros of years before 1000).
    for day, group in groupby(chosen, key=lambda c: c[0].created_at.date().isoformat()):
        lines.append(f"{day}:")
        lines += [line for _, line in group]
    return "\n".join(lines)
