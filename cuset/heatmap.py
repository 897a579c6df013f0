"""Token-confidence heatmaps as self-contained HTML: what the dashboard shows and downloads.

One function, `render`, turns a response, its token scores and sensitivity bits into a complete
HTML document: every token coloured by the chosen signal on a single-hue sequential scale
(light = confident, dark orange = unsure; single-hue scales read the same under every form of
colour blindness), optional outlines of CUDA-sensitive tokens, a one-category filter, region
outlines and struck-through masked tokens. With `delta` (a confidence diff of two models) the
tokens are coloured on a diverging scale centred on zero instead (ColorBrewer BrBG). Hovering a token shows its probability, entropy,
rank, top-k alternatives (decoded text, whitespace shown as · ⏎ →) and categories.

It reads like an editor: one row per source line with its line number; long lines wrap (or,
with the view's "wrap" box off, scroll sideways with the numbers kept in place); region labels
sit in a lane of their own left of the line numbers, on the row where the region starts, so
they never cover code; regions are widened to whole identifiers of the source (a region of
the sub-word pieces "rict" of `__restrict__` shows as `__restrict__`); tokens carry a little
padding below the glyphs so underscores stay visible inside backgrounds and outlines.

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
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cuset.sensitivity import CATEGORIES, CATEGORY_BIT

SIGNALS = ("probability", "entropy", "rank")
# ColorBrewer "Oranges" end points: a single-hue sequential scale, safe for colour-blind readers.
LIGHT = (255, 247, 236)
DARK = (204, 76, 2)
LEVELS = 12  # discrete colour steps: classes c0..c11 keep a 2,000-token page small
ENTROPY_CEILING = 6.0  # nats; higher entropies share the darkest colour
RANK_CEILING = 1000
# ColorBrewer "BrBG" (11 classes): a diverging scale centred on white, safe for colour-blind
# readers, for signed values such as a confidence diff (brown = lost, teal = gained). Its hues
# stay clear of the blue sensitivity and purple region outlines.
DIVERGING = ("#543005", "#8c510a", "#bf812d", "#dfc27d", "#f6e8c3", "#f5f5f5", "#c7eae5", "#80cdc1", "#35978f", "#01665e", "#003c30")
DELTA_CEILING = 3.0  # nats; |delta log p| beyond it shares the end colours
LINE_PX = 22  # row height: 13 px code with room below the glyphs for token padding
WHITESPACE_MARKS = {" ": "·", "\n": "⏎", "\t": "→", "\r": "␍"}


@dataclass(frozen=True)
class RegionMark:
    """A region to outline: inclusive token range and its kind label."""

    tok_start: int
    tok_end: int
    kind: str


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def snap_to_words(text: str, starts: np.ndarray, ends: np.ndarray, tok_start: int, tok_end: int) -> tuple[int, int]:
    """The inclusive token range [tok_start, tok_end] widened to whole identifiers of `text`:
    while the range starts (ends) between two identifier characters and the neighbouring token
    covers the other one, take that token in. starts/ends [n]: the tokens' character offsets."""
    a, b = int(tok_start), int(tok_end)
    while a > 0 and starts[a] > 0 and ends[a - 1] >= starts[a] and _word_char(text[starts[a] - 1]) and _word_char(text[starts[a]]):
        a -= 1
    n = len(starts)
    while b < n - 1 and ends[b] < len(text) and starts[b + 1] <= ends[b] and _word_char(text[ends[b] - 1]) and _word_char(text[ends[b]]):
        b += 1
    return a, b


def snap_marks(text: str, starts: np.ndarray, ends: np.ndarray, marks: Sequence[RegionMark]) -> list[RegionMark]:
    """Regions snapped to whole identifiers (snap_to_words), in order; regions that then
    overlap are merged into one, labelled with both kinds."""
    out: list[RegionMark] = []
    for mark in sorted(marks, key=lambda m: (m.tok_start, m.tok_end)):
        a, b = snap_to_words(text, starts, ends, mark.tok_start, mark.tok_end)
        if out and a <= out[-1].tok_end:
            last = out[-1]
            kinds = last.kind if mark.kind in last.kind.split(" + ") else f"{last.kind} + {mark.kind}"
            out[-1] = replace(last, tok_end=max(last.tok_end, b), kind=kinds)
        else:
            out.append(RegionMark(a, b, mark.kind))
    return out


def snap_rows(rows: Sequence[dict[str, Any]], text: str, starts: np.ndarray, ends: np.ndarray) -> list[dict[str, Any]]:
    """cuset.regions.region_rows of one sample with token range, characters, text and lines
    widened to whole identifiers, as the heatmap shows them."""
    out = []
    for row in rows:
        a, b = snap_to_words(text, starts, ends, row["tokens"][0], row["tokens"][1])
        lo, hi = int(starts[a]), int(ends[b])
        first = text.count("\n", 0, lo) + 1
        last = first + text.count("\n", lo, hi)
        out.append({**row, "tokens": [a, b], "chars": [lo, hi], "text": text[lo:hi], "line": first, "lines": f"{first}-{last}" if last > first else str(first)})
    return out


def visible_whitespace(text: str) -> str:
    """Whitespace made visible: space ·, newline ⏎, tab →, carriage return ␍."""
    return "".join(WHITESPACE_MARKS.get(c, c) for c in text)


def decode_alternatives(tokenizer: Any, topk_ids: np.ndarray) -> list[list[str]]:
    """[n][k] top-k alternatives as the text each token stands for (byte-level BPE such as
    'Ġheartfelt' decoded to ' heartfelt'), with whitespace made visible ('·heartfelt').
    Each distinct id is decoded once."""
    ids = np.asarray(topk_ids, dtype=np.int64)
    unique, inverse = np.unique(ids, return_inverse=True)
    decoded = tokenizer.batch_decode([[int(i)] for i in unique], skip_special_tokens=False, clean_up_tokenization_spaces=False)
    shown = np.array([visible_whitespace(t) for t in decoded] or [""], dtype=object)
    return shown[inverse.reshape(ids.shape)].tolist() if ids.size else [[] for _ in range(ids.shape[0])]


def intensity(signal: str, p: np.ndarray, entropy: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """[n] in [0, 1]: 0 = confident (light), 1 = unsure (dark)."""
    if signal == "probability":
        return np.clip(1.0 - p, 0.0, 1.0)
    if signal == "entropy":
        return np.clip(entropy / ENTROPY_CEILING, 0.0, 1.0)
    if signal == "rank":
        return np.clip(np.log10(np.maximum(rank, 1)) / math.log10(RANK_CEILING), 0.0, 1.0)
    raise ValueError(f"Unknown signal {signal!r}; valid: {', '.join(SIGNALS)}.")


def diverging_level(delta: np.ndarray, ceiling: float = DELTA_CEILING) -> np.ndarray:
    """int [n] in 0..10: the DIVERGING class of each signed value (5 = within ±ceiling/20 of zero)."""
    x = np.clip(np.asarray(delta, dtype=np.float64) / ceiling, -1.0, 1.0)
    return np.rint((x + 1.0) * (len(DIVERGING) - 1) / 2).astype(int)


def diverging_stops(ceiling: float = DELTA_CEILING) -> list[tuple[str, str]]:
    """(label, colour) pairs for a diverging legend, from -ceiling to +ceiling."""
    values = np.linspace(-ceiling, ceiling, 5)
    labels = [f"≤ {values[0]:g}", f"{values[1]:+g}", "0", f"{values[3]:+g}", f"≥ {values[4]:+g}"]
    return [(label, DIVERGING[level]) for label, level in zip(labels, diverging_level(values, ceiling))]


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
.legend label { margin-left: 8px; user-select: none; }
.code { font: 13px/LINEpx ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; border: 1px solid #ddd; border-radius: 4px; padding: 4px 0; }
.row { display: grid; grid-template-columns: var(--ln) minmax(0, 1fr); min-height: LINEpx; }
.code.has-lane .row { grid-template-columns: 11em var(--ln) minmax(0, 1fr); }
.ln { color: #888; text-align: right; padding-right: 10px; background: #f6f6f6; border-right: 1px solid #ddd; user-select: none; }
.lab { display: flex; min-width: 0; font: 10.5px/LINEpx system-ui, sans-serif; color: #4b2a78; padding: 0 6px; white-space: nowrap; overflow: hidden; user-select: none; background: #fbf9fd; border-right: 1px solid #e6e0ee; }
.rl { cursor: default; flex: 0 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.rl + .rl::before { content: " · "; color: #999; }
.lc { padding-left: 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
.code.nowrap { overflow-x: auto; }
.code.nowrap .row { width: max-content; min-width: 100%; }
.code.nowrap .lc { white-space: pre; }
.code.nowrap .ln, .code.nowrap .lab { position: sticky; z-index: 1; }
.code.nowrap .ln { left: var(--lane); } .code.nowrap .lab { left: 0; }
.t { border-radius: 2px; cursor: default; padding: 1px 0 2px; }
.t.s { outline: 1.5px solid #1f5fbf; outline-offset: 0; }
.t.dim { background: transparent !important; color: #999 !important; }
.t.m { background: #ececec !important; color: #6b6b6b !important; text-decoration: line-through; text-decoration-color: #b00020; text-decoration-thickness: 1.5px; }
.t:hover { outline: 2px solid #000; }
.region { outline: 2px dashed #6a3d9a; outline-offset: 1px; border-radius: 3px; }
.region.hl, .region:hover { outline-style: solid; outline-width: 2.5px; }
.legend .sw.region { outline-offset: -2px; }
#tip { position: fixed; display: none; z-index: 10; background: #222; color: #fff; font: 12px/1.35 ui-monospace, monospace; padding: 6px 8px; border-radius: 4px; white-space: pre; pointer-events: none; max-width: 480px; }
""".replace("LINE", str(LINE_PX))

SCRIPT = r"""
(function () {
  const d = JSON.parse(document.getElementById('token-data').textContent);
  const tip = document.getElementById('tip');
  const code = document.querySelector('.code');
  const fmt = (x) => (x < 0.001 ? x.toExponential(2) : x.toFixed(4));
  const vis = (s) => s.replace(/ /g, '\u00b7').replace(/\n/g, '\u23ce').replace(/\t/g, '\u2192').replace(/\r/g, '\u240d');
  const cats = (b) => d.categories.filter((c, k) => b & (1 << k));
  code.addEventListener('mouseover', (ev) => {
    const label = ev.target.closest('.rl');
    document.querySelectorAll('.region.hl').forEach((e) => e.classList.remove('hl'));
    if (label) label.dataset.r.split(' ').forEach((r) => document.querySelectorAll('.code .region[data-r="' + r + '"]').forEach((e) => e.classList.add('hl')));
    const el = ev.target.closest('.t');
    if (!el) { tip.style.display = 'none'; return; }
    const i = +el.dataset.i;
    const c = cats(d.bits[i]);
    const text = [...code.querySelectorAll('.t[data-i="' + i + '"]')].map((e) => e.textContent).join('\n');
    const lines = [
      'token ' + i + ': ' + vis(text),
      'p = ' + fmt(d.p[i]) + '   entropy = ' + d.entropy[i].toFixed(3) + ' nats   rank = ' + d.rank[i],
      'categories: ' + (c.length ? c.join(', ') : 'none'),
      'top-k:',
    ].concat(d.top[i].map((a, k) => '  ' + a + '   ' + fmt(d.top_p[i][k])));
    if (d.masked[i]) lines.push('masked by the objective');
    if (d.notes) lines.push(d.notes[i]);
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 300) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  });
  code.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  const wrap = document.getElementById('wrap');
  if (wrap) wrap.addEventListener('change', () => code.classList.toggle('nowrap', !wrap.checked));
})();
"""


class _Rows:
    """Builds one row per source line while tokens and regions open and close: a newline
    inside an open token or region closes it at the end of the row and reopens it on the
    next, so every row is well-formed HTML."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = [[]]
        self.open: list[str] = []  # opening tags of the spans open now, outermost first

    def push(self, tag: str) -> None:
        self.rows[-1].append(tag)
        self.open.append(tag)

    def pop(self) -> None:
        self.rows[-1].append("</span>")
        self.open.pop()

    def text(self, text: str) -> None:
        for k, piece in enumerate(text.split("\n")):
            if k:
                self.rows[-1].append("</span>" * len(self.open))
                self.rows.append([tag.replace('class="region"', 'class="region cont"') for tag in self.open])
            if piece:
                self.rows[-1].append(html.escape(piece))


def _lane(starting: Sequence[tuple[int, str]]) -> str:
    """The lane cell of one row: the kinds of the regions starting there, each once with a
    count ('kernel qualifier ×3'); hovering one highlights its regions (data-r lists them)."""
    kinds: dict[str, list[int]] = {}
    for k, kind in starting:
        kinds.setdefault(kind, []).append(k)
    cells = "".join(
        f'<span class="rl" data-r="{" ".join(map(str, ks))}" title="{html.escape(kind)}">{html.escape(kind)}{f" ×{len(ks)}" if len(ks) > 1 else ""}</span>'
        for kind, ks in kinds.items()
    )
    return f'<div class="lab">{cells}</div>'


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
    tokenizer: Any = None,
    category_names: Sequence[str] | None = None,
    title: str = "",
    wrap: bool = True,
    delta: np.ndarray | None = None,
    delta_label: str = "Δ log p",
    notes: Sequence[str] | None = None,
) -> str:
    """A complete HTML document showing `response` coloured token by token.

    scores: a cuset.confidence.TokenScores (starts/ends/p/entropy/rank/topk_p [n]); bits [n]
    category bits per token; regions: token ranges to outline (snapped to whole identifiers,
    labelled in the lane); masked [n] bool: tokens the objective masks (struck through);
    top_names [n][k]: the top-k alternatives as shown, else decoded with `tokenizer`
    (decode_alternatives), else token ids; category_names: the words the tooltip uses for
    cuset.sensitivity.CATEGORIES (default: the names themselves); wrap: long lines wrap (else
    they scroll sideways; the view has a box to switch); delta [n]: colour by these signed
    values (nats) on the diverging DIVERGING scale instead of `signal` (a confidence diff),
    named `delta_label` in the legend; notes [n]: one more tooltip line per token (e.g. both
    models' values).
    """
    if only_category is not None and only_category not in CATEGORY_BIT:
        raise ValueError(f"Unknown category {only_category!r}; valid: {', '.join(CATEGORIES)}.")
    s = scores
    n = len(s.p)
    if delta is not None:
        level = diverging_level(delta)
        palette = list(DIVERGING)
        dark = {0, 1, len(DIVERGING) - 2, len(DIVERGING) - 1}
    else:
        level = np.minimum((intensity(signal, s.p, s.entropy, s.rank) * LEVELS).astype(int), LEVELS - 1)
        palette = [colour(k / (LEVELS - 1)) for k in range(LEVELS)]
        dark = {k for k in range(LEVELS) if k / (LEVELS - 1) > 0.62}
    marks = snap_marks(response, s.starts, s.ends, regions) if n else []
    opens = {m.tok_start: (k, m) for k, m in enumerate(marks)}
    closes = {m.tok_end for m in marks}
    labels: dict[int, list[str]] = {}
    wanted = CATEGORY_BIT[only_category] if only_category else 0
    is_masked = np.zeros(n, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    out = _Rows()
    cursor = 0
    for i in range(n):
        start, end = int(s.starts[i]), int(s.ends[i])
        if start > cursor:
            out.text(response[cursor:start])
        if i in opens:
            k, mark = opens[i]
            shown = response[max(start, cursor):end]
            row = len(out.rows) - 1 + shown[: len(shown) - len(shown.lstrip())].count("\n")  # where its code starts
            out.push(f'<span class="region" data-r="{k}" data-kind="{html.escape(mark.kind)}">')
            labels.setdefault(row, []).append((k, mark.kind))
        token_bits = int(bits[i])
        classes = f"t c{level[i]}"
        if outline_sensitive and token_bits and (not wanted or token_bits & wanted):
            classes += " s"
        if wanted and not token_bits & wanted:
            classes += " dim"
        if is_masked[i]:
            classes += " m"
        out.push(f'<span class="{classes}" data-i="{i}">')
        out.text(response[max(start, cursor):end])
        out.pop()
        if i in closes:
            out.pop()
        cursor = max(cursor, end)
    if cursor < len(response):
        out.text(response[cursor:])
    if response.endswith("\n") and len(out.rows) > 1 and not re.sub(r"<[^>]*>", "", "".join(out.rows[-1])):
        out.rows.pop()  # the final newline ends the last line; it does not start an empty one
    names = top_names if top_names is not None else (decode_alternatives(tokenizer, s.topk_ids) if tokenizer is not None else [[str(int(t)) for t in row] for row in s.topk_ids])
    data = {
        "categories": list(category_names or CATEGORIES),
        "p": [float(f"{x:.4g}") for x in s.p],
        "entropy": [round(float(x), 3) for x in s.entropy],
        "rank": [int(x) for x in s.rank],
        "bits": [int(b) for b in bits],
        "top": [[str(name) for name in row] for row in names],
        "top_p": [[float(f"{q:.3g}") for q in row] for row in s.topk_p],
        "masked": [int(x) for x in is_masked],
    }
    if notes is not None:
        data["notes"] = [str(x) for x in notes]
    width = len(str(len(out.rows))) + 2
    rows = "".join(
        f'<div class="row">{_lane(labels.get(k, ())) if marks else ""}<div class="ln">{k + 1}</div><div class="lc">{"".join(row)}</div></div>'
        for k, row in enumerate(out.rows)
    )
    stops = diverging_stops() if delta is not None else legend_stops(signal)
    light_text = {0, 4} if delta is not None else {3, 4}
    legend = "".join(f'<span class="sw" style="background:{c};color:{"#fff" if k in light_text else "inherit"}">{html.escape(label)}</span>' for k, (label, c) in enumerate(stops))
    extras = []
    if outline_sensitive:
        shown = (category_names or CATEGORIES)[CATEGORIES.index(only_category)] if only_category else ""
        extras.append('<span class="sw t s" style="background:#fff">CUDA-sensitive' + (f": {html.escape(shown)}" if shown else "") + "</span>")
    if masked is not None:
        extras.append('<span class="sw t m">masked</span>')
    if marks:
        extras.append('<span class="sw region">low-confidence region (labels in the left lane)</span>')
    extras.append(f'<label><input type="checkbox" id="wrap"{" checked" if wrap else ""}> wrap long lines</label>')
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")
    levels = "".join(f".c{k}{{background:{c}{';color:#fff' if k in dark else ''}}}" for k, c in enumerate(palette))
    heading = f"<h3>{html.escape(title)}</h3>" if title else ""
    lane_width = "11em" if marks else "0px"
    classes = "code" + (" has-lane" if marks else "") + ("" if wrap else " nowrap")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
        + html.escape(title or "CuSeT heatmap")
        + f"</title><style>{STYLE}{levels}</style></head><body>{heading}"
        + f'<div class="legend"><b>{html.escape(delta_label if delta is not None else signal)}</b>{legend}{"".join(extras)}</div>'
        + f'<div class="{classes}" style="--ln:{width}ch;--lane:{lane_width}">{rows}</div>'
        + f'<div id="tip"></div><script type="application/json" id="token-data">{payload}</script>'
        + f"<script>{SCRIPT}</script></body></html>"
    )
