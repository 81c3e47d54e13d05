"""Small line charts as SVG text, written by hand: the load benchmark's resident memory and
pipeline backlog over time (`bench.load`). No plotting library: a few polylines, axes and
labels are all it needs, and the file opens in any browser."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[tuple[float, float]]


@dataclass(frozen=True)
class Panel:
    """One chart: its title, y-axis unit and lines; `marks` are vertical lines at x
    positions with a label each (where the load stopped)."""

    title: str
    unit: str
    series: Sequence[Series]
    marks: Sequence[tuple[float, str]] = field(default_factory=tuple)


def _nice_top(v: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above `v` (axis top)."""
    if v <= 0:
        return 1.0
    power = 10 ** (len(str(int(v))) - 1) if v >= 1 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= v:
            return m * power
    return 10 * power


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.1f}"


def render(panels: Sequence[Panel], x_label: str, width: int = 760, height: int = 220) -> str:
    """The panels stacked, sharing the x range of all their points."""
    xs = [x for p in panels for s in p.series for x, _ in s.points] + [
        x for p in panels for x, _ in p.marks
    ]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x1 <= x0:
        x1 = x0 + 1.0
    left, right, top, bottom = 64, 16, 28, 36
    plot_w = width - left - right
    plot_h = height - top - bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height * len(panels)}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height * len(panels)}" fill="white"/>',
    ]
    for i, panel in enumerate(panels):
        oy = i * height
        ys = [y for s in panel.series for _, y in s.points]
        y_top = _nice_top(max(ys) if ys else 1.0)

        def px(x: float) -> float:
            return left + (x - x0) / (x1 - x0) * plot_w

        def py(y: float, oy: int = oy, y_top: float = y_top) -> float:
            return oy + top + plot_h - y / y_top * plot_h

        out.append(
            f'<text x="{left}" y="{oy + 18}" font-size="13" font-weight="bold">'
            f"{escape(panel.title)}</text>"
        )
        out.append(
            f'<rect x="{left}" y="{oy + top}" width="{plot_w}" height="{plot_h}" '
            'fill="none" stroke="#999"/>'
        )
        for k in range(5):
            v = y_top * k / 4
            y = py(v)
            out.append(
                f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
            )
            out.append(
                f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">'
                f"{_fmt(v)} {escape(panel.unit)}</text>"
            )
        step = _nice_top((x1 - x0) / 6)
        for k in range(math.ceil(x0 / step), math.floor(x1 / step) + 1):
            v = k * step
            out.append(
                f'<text x="{px(v):.1f}" y="{oy + top + plot_h + 14}" '
                f'text-anchor="middle">{_fmt(v)}</text>'
            )
        out.append(
            f'<text x="{left + plot_w / 2}" y="{oy + height - 4}" text-anchor="middle">'
            f"{escape(x_label)}</text>"
        )
        for x, label in panel.marks:
            out.append(
                f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{oy + top}" '
                f'y2="{oy + top + plot_h}" stroke="#555" stroke-dasharray="4 3"/>'
            )
            # A mark near the right edge is labelled on its left.
            near_edge = px(x) > left + plot_w - 80
            anchor, dx = ("end", -3) if near_edge else ("start", 3)
            out.append(
                f'<text x="{px(x) + dx:.1f}" y="{oy + top + 12}" text-anchor="{anchor}">'
                f"{escape(label)}</text>"
            )
        # The legend in the title's row, right-aligned, so no mark's label covers it.
        cursor = float(left + plot_w)
        for j, s in reversed(list(enumerate(panel.series))):
            colour = COLOURS[j % len(COLOURS)]
            pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
            if pts:
                out.append(
                    f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
                )
            out.append(
                f'<text x="{cursor:.1f}" y="{oy + 18}" text-anchor="end" '
                f'fill="{colour}">{escape(s.label)}</text>'
            )
            cursor -= len(s.label) * 6.5 + 16
    out.append("</svg>")
    return "\n".join(out) + "\n"
