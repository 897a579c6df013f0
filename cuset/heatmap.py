"""Token-confidence heatmaps as self-contained HTML: what the dashboard shows and downloads.

One function, `render`, turns a response, its token scores and sensitivity bits into a complete
HTML document: every token coloured by the chosen signal on a single-hue sequential scale
(light = confident, dark orange = unsure; single-hue scales read the same under every form of
colour blindness), line numbers, optional outlines of CUDA-sensitive tokens, a one-category
filter, labelled region outlines and struck-through masked tokens. Hovering a token shows its
probability, entropy, rank, top-k alternatives and categories.

Every piece of text from a sample goes through `html.escape`; per-token data travels as JSON
inside `<script type="application/json">` with `<` escaped, and the tooltip writes it with
`textContent`, so code such as `</span><script>` or `<img onerror=...>` renders as text.

    from cuset.heatmap import render
    html = render(response, scores, bits, signal="probability")
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cuset.sensitivity import CATEGORIES, CATEGORY_BIT

SIGNALS = ("probability", "entropy", "rank")
# ColorBrewer "Oranges" end points: a single-hue sequential scale, safe for colour-blind readers.
LIGHT = (255, 247, 236)
DARK = (204, 76, 2)
LEVELS = 12  # discrete colour steps: classes c0..c11 keep a 2,000-token page small
ENTROPY_CEILING = 6.0  # nats; higher entropies share the darkest colour
RANK_CEILING = 1000


@dataclass(frozen=True)
class RegionMark:
    """A region to outline: inclusive token range and its kind label."""

    tok_start: int
    tok_end: int
    kind: str


def intensity(signal: str, p: np.ndarray, entropy: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """[n] in [0, 1]: 0 = confident (light), 1 = unsure (dark)."""
    if signal == "probability":
        return np.clip(1.0 - p, 0.0, 1.0)
    if signal == "entropy":
        return np.clip(entropy / ENTROPY_CEILING, 0.0, 1.0)
    if signal == "rank":
        return np.clip(np.log10(np.maximum(rank, 1)) / math.log10(RANK_CEILING), 0.0, 1.0)
    raise ValueError(f"Unknown signal {signal!r}; valid: {', '.join(SIGNALS)}.")


def colour(value: float) -> str:
    rgb = [round(a + (b - a) * value) for a, b in zip(LIGHT, DARK)]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def legend_stops(signal: str) -> list[tuple[str, str]]:
    """(label, colour) pairs for the legend."""
    if signal == "probability":
        labels = ["p = 1", "0.75", "0.5", "0.25", "p = 0"]
    elif signal == "entropy":
        labels = ["0 nats", "1.5", "3", "4.5", f">= {ENTROPY_CEILING:g}"]
    else:
        labels = ["rank 1", "~6", "~32", "~178", f">= {RANK_CEILING}"]
    return [(label, colour(i / 4)) for i, label in enumerate(labels)]


STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #1a1a1a; }
.legend { display: flex; gap: 4px; align-items: center; font-size: 12px; margin: 6px 0 8px; flex-wrap: wrap; }
.legend .sw { padding: 1px 6px; border: 1px solid #ccc; border-radius: 3px; }
.code { display: flex; font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; line-height: 1.45; border: 1px solid #ddd; border-radius: 4px; }
.gutter { color: #888; text-align: right; padding: 6px 8px; background: #f6f6f6; border-right: 1px solid #ddd; user-select: none; white-space: pre; }
pre.src { margin: 0; padding: 6px 10px; white-space: pre; overflow-x: auto; flex: 1; }
.t { border-radius: 2px; cursor: default; }
.t.s { outline: 1.5px solid #1f5fbf; outline-offset: -1px; }
.t.dim { background: transparent !important; color: #999 !important; }
.t.m { background: #ececec !important; color: #6b6b6b !important; text-decoration: line-through; text-decoration-color: #b00020; text-decoration-thickness: 1.5px; }
.t:hover { outline: 2px solid #000; }
.region { border: 2px dashed #6a3d9a; border-radius: 3px; padding: 0 1px; position: relative; }
.rlabel { position: absolute; left: -2px; top: -1.25em; font: 9px/1.2 system-ui, sans-serif; background: #6a3d9a; color: #fff; border-radius: 3px; padding: 0 3px; white-space: nowrap; pointer-events: none; opacity: 0.92; }
.code.regions { line-height: 2.1; }
#tip { position: fixed; display: none; z-index: 10; background: #222; color: #fff; font: 12px/1.35 ui-monospace, monospace; padding: 6px 8px; border-radius: 4px; white-space: pre; pointer-events: none; max-width: 480px; }
"""

SCRIPT = """
(function () {
  const d = JSON.parse(document.getElementById('token-data').textContent);
  const tip = document.getElementById('tip');
  const fmt = (x) => (x < 0.001 ? x.toExponential(2) : x.toFixed(4));
  const cats = (b) => d.categories.filter((c, k) => b & (1 << k));
  document.querySelector('pre.src').addEventListener('mouseover', (ev) => {
    const el = ev.target.closest('.t');
    if (!el) { tip.style.display = 'none'; return; }
    const i = +el.dataset.i;
    const c = cats(d.bits[i]);
    const lines = [
      'token ' + i + ': ' + JSON.stringify(el.textContent),
      'p = ' + fmt(d.p[i]) + '   entropy = ' + d.entropy[i].toFixed(3) + ' nats   rank = ' + d.rank[i],
      'categories: ' + (c.length ? c.join(', ') : 'none'),
      'top-k:',
    ].concat(d.top[i].map((a, k) => '  ' + JSON.stringify(a) + '  ' + fmt(d.top_p[i][k])));
    if (d.masked[i]) lines.push('masked by the objective');
    tip.textContent = lines.join('\\n');
    tip.style.display = 'block';
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 300) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  });
  document.querySelector('pre.src').addEventListener('mouseleave', () => { tip.style.display = 'none'; });
})();
"""


def render(
    response: str,
    scores: object,
    bits: np.ndarray,
    *,
    signal: str = "probability",
    outline_sensitive: bool = True,
    only_category: str | None = None,
    regions: Sequence[RegionMark] = (),
    masked: np.ndarray | None = None,
    top_names: Sequence[Sequence[str]] | None = None,
    title: str = "",
) -> str:
    """A complete HTML document showing `response` coloured token by token.

    scores: a cuset.confidence.TokenScores (starts/ends/p/entropy/rank/topk_p [n]); bits [n]
    category bits per token; regions: token ranges to outline; masked [n] bool: tokens the
    objective masks (struck through); top_names [n][k]: decoded top-k alternatives.
    """
    if only_category is not None and only_category not in CATEGORY_BIT:
        raise ValueError(f"Unknown category {only_category!r}; valid: {', '.join(CATEGORIES)}.")
    s = scores
    n = len(s.p)
    level = np.minimum((intensity(signal, s.p, s.entropy, s.rank) * LEVELS).astype(int), LEVELS - 1)
    opens: dict[int, list[RegionMark]] = {}
    closes: dict[int, int] = {}
    for mark in sorted(regions, key=lambda r: r.tok_start):
        opens.setdefault(mark.tok_start, []).append(mark)
        closes[mark.tok_end] = closes.get(mark.tok_end, 0) + 1
    wanted = CATEGORY_BIT[only_category] if only_category else 0
    is_masked = np.zeros(n, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    parts: list[str] = []
    cursor = 0
    for i in range(n):
        start, end = int(s.starts[i]), int(s.ends[i])
        if start > cursor:
            parts.append(html.escape(response[cursor:start]))
        for mark in opens.get(i, ()):
            parts.append(f'<span class="region" data-kind="{html.escape(mark.kind)}"><span class="rlabel">{html.escape(mark.kind)}</span>')
        token_bits = int(bits[i])
        classes = f"t c{level[i]}"
        if outline_sensitive and token_bits and (not wanted or token_bits & wanted):
            classes += " s"
        if wanted and not token_bits & wanted:
            classes += " dim"
        if is_masked[i]:
            classes += " m"
        parts.append(f'<span class="{classes}" data-i="{i}">{html.escape(response[start:end])}</span>')
        parts.append("</span>" * closes.get(i, 0))
        cursor = max(cursor, end)
    names = top_names if top_names is not None else [[str(int(t)) for t in row] for row in s.topk_ids]
    data = {
        "categories": list(CATEGORIES),
        "p": [float(f"{x:.4g}") for x in s.p],
        "entropy": [round(float(x), 3) for x in s.entropy],
        "rank": [int(x) for x in s.rank],
        "bits": [int(b) for b in bits],
        "top": [[str(name) for name in row] for row in names],
        "top_p": [[float(f"{q:.3g}") for q in row] for row in s.topk_p],
        "masked": [int(x) for x in is_masked],
    }
    if cursor < len(response):
        parts.append(html.escape(response[cursor:]))
    n_lines = response.count("\n") + (0 if response.endswith("\n") else 1)
    gutter = "\n".join(str(k) for k in range(1, n_lines + 1))
    legend = "".join(f'<span class="sw" style="background:{c};color:{"#fff" if k >= 3 else "inherit"}">{html.escape(label)}</span>' for k, (label, c) in enumerate(legend_stops(signal)))
    extras = []
    if outline_sensitive:
        extras.append('<span class="sw t s" style="background:#fff">CUDA-sensitive' + (f": {html.escape(only_category)}" if only_category else "") + "</span>")
    if masked is not None:
        extras.append('<span class="sw t m">masked</span>')
    if regions:
        extras.append('<span class="sw region">low-confidence region</span>')
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    levels = "".join(
        f".c{k}{{background:{colour(k / (LEVELS - 1))}{';color:#fff' if k / (LEVELS - 1) > 0.62 else ''}}}" for k in range(LEVELS)
    )
    heading = f"<h3>{html.escape(title)}</h3>" if title else ""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
        + html.escape(title or "CuSeT heatmap")
        + f"</title><style>{STYLE}{levels}</style></head><body>{heading}"
        + f'<div class="legend"><b>{html.escape(signal)}</b>{legend}{"".join(extras)}</div>'
        + f'<div class="code{" regions" if regions else ""}"><div class="gutter">{gutter}</div><pre class="src">{"".join(parts)}</pre></div>'
        + f'<div id="tip"></div><script type="application/json" id="token-data">{payload}</script>'
        + f"<script>{SCRIPT}</script></body></html>"
    )

