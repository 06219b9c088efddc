"""Geometry of the site's charts (SVG drawn by the templates; no inline styles, classes only).

Level colours come from CSS classes ``lvl-r<rank>`` (``lvl-cond`` for an expression,
``lvl-bool`` for a bool, which is no level, ``lvl-none`` for no declaration), so the matrix,
the charts and the badges share one palette.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any

from markupsafe import Markup

from ..dates import parse_time

WIDTH = 1000.0


def ts(when: str | None) -> float | None:
    """Seconds since the epoch of an ISO date (a time without a zone is UTC), or None."""
    dt = parse_time(when)
    return None if dt is None else dt.timestamp()


def level_class(run: dict[str, Any] | None) -> str:
    if run is None or run.get("value") is None:
        return "lvl-none"
    if run.get("bool"):  # a bool: no level (Profile.value_text)
        return "lvl-bool"
    if run.get("level") is None:
        return "lvl-cond"
    return f"lvl-r{run['rank']}"


def span(builders: dict[str, dict[str, Any]]) -> tuple[float, float]:
    times = [t for b in builders.values() for r in b["runs"] if (t := ts(r["at"])) is not None]
    if not times:
        return 0.0, 1.0
    lo, hi = min(times), max(times)
    pad = max((hi - lo) * 0.02, 86400.0)
    return lo - pad, hi + pad


def segments(runs: list[dict[str, Any]], lo: float, hi: float) -> list[dict[str, Any]]:
    """Horizontal segments (x, width in a 0..1000 box) of a builder's runs."""
    out: list[dict[str, Any]] = []
    dated = _dated(runs, lo)
    scale = WIDTH / (hi - lo) if hi > lo else 0.0
    for i, (t, r) in enumerate(dated):
        assert t is not None
        end = dated[i + 1][0] if i + 1 < len(dated) else hi
        assert end is not None
        x = (t - lo) * scale
        w = max((end - t) * scale, 1.5)
        out.append({"x": round(x, 2), "w": round(w, 2), "run": r, "cls": level_class(r)})
    return out


def _dated(runs: list[dict[str, Any]], start: float) -> list[tuple[float, dict[str, Any]]]:
    """Runs with a time; an undated run (a record without dates) takes its predecessor's."""
    out: list[tuple[float, dict[str, Any]]] = []
    last = start
    for r in runs:
        t = ts(r["at"])
        t = last if t is None else max(t, last)
        out.append((t, r))
        last = t
    return out


def axis_ticks(lo: float, hi: float, n: int = 6) -> list[dict[str, Any]]:
    """Dated tick marks along the 0..1000 axis."""
    if hi <= lo:
        return []
    out = []
    fmt = "%Y-%m-%d" if hi - lo < 200 * 86400 else "%Y-%m"
    for i in range(n + 1):
        t = lo + (hi - lo) * i / n
        label = datetime.fromtimestamp(t, UTC).strftime(fmt)
        out.append({"x": round(WIDTH * i / n, 1), "label": label})
    return out


def step_chart(
    runs: list[dict[str, Any]], levels: tuple[str, ...], *, height: float = 200.0
) -> dict[str, Any]:
    """A step chart of one builder's level over time: path, points, axes."""
    left, right, top, bottom = 270.0, 50.0, 14.0, 30.0
    inner_w = WIDTH - left - right
    inner_h = height - top - bottom
    known = [t for r in runs if (t := ts(r["at"])) is not None]
    dated = _dated(runs, min(known)) if known else []
    if dated:
        lo, hi = dated[0][0], dated[-1][0]
        pad = max((hi - lo) * 0.05, 86400.0 * 7)
        lo, hi = lo - pad, hi + pad
    else:
        lo, hi = 0.0, 1.0
    top_rank = max(len(levels) - 1, 1)

    def x(t: float) -> float:
        return round(left + (t - lo) / (hi - lo) * inner_w, 2)

    def y(rank: int | None) -> float:
        r = -0.5 if rank is None else rank
        return round(top + inner_h - (r + 0.5) / (top_rank + 1) * inner_h, 2)

    points = []
    d = []
    for i, (t, r) in enumerate(dated):
        px, py = x(t), y(r["rank"])
        if i == 0:
            d.append(f"M{px},{py}")
        else:
            d.append(f"H{px} V{py}")
        points.append({"x": px, "y": py, "run": r, "cls": level_class(r)})
    if dated:
        d.append(f"H{x(hi)}")
    grid = [{"y": y(i), "label": name, "cls": f"lvl-r{i}"} for i, name in enumerate(levels)]
    ticks = [
        {"x": round(left + tk["x"] / WIDTH * inner_w, 1), "label": tk["label"]}
        for tk in axis_ticks(lo, hi, 5)
    ]
    return {
        "width": WIDTH,
        "height": height,
        "left": left,
        "right": WIDTH - right,
        "bottom": height - bottom,
        "path": " ".join(d),
        "points": points,
        "grid": grid,
        "ticks": ticks,
    }


def bar_svg(segs: list[dict[str, Any]], here: str, no_decl: str, dynamic: str) -> Markup:
    """The SVG content of one matrix row (built here, not in Jinja: rows can be long).

    Every text is escaped; hrefs are built from PR slugs (digits or ``c`` + hex).
    """
    out = []
    for s in segs:
        r = s["run"]
        title = f"{r['at'][:10]} {r['text'] or no_decl}"
        if r["dynamic"]:
            title += f" ({dynamic})"
        if r["pr_label"]:
            title += f" · {r['pr_label']}"
        rect = (f'<rect x="{s["x"]}" y="2" width="{s["w"]}" height="18" class="seg {s["cls"]}">'
                f"<title>{escape(title)}</title></rect>")
        if r["dynamic"]:
            rect += f'<rect x="{s["x"]}" y="2" width="{s["w"]}" height="5" class="dynmark"/>'
        if r["pr"]:
            rect = f'<a href="{escape(here)}pr/{escape(r["pr"])}.html">{rect}</a>'
        out.append(rect)
    return Markup("".join(out))
