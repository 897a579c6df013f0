"""The heatmap renderer: colours, outlines, regions, masks, and escaping of hostile code."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest

from cuset.confidence import TokenScores
from cuset.heatmap import LIGHT, RegionMark, colour, intensity, render
from cuset.sensitivity import CATEGORY_BIT


def scores_for(text: str, cuts: list[int], p: list[float]) -> TokenScores:
    starts = np.array(cuts[:-1], dtype=np.int32)
    ends = np.array(cuts[1:], dtype=np.int32)
    n = len(p)
    return TokenScores("s", np.zeros(n, np.int32), starts, ends, np.array(p, np.float32), np.log(np.array(p, np.float32)),
                       np.linspace(0, 5, n).astype(np.float32), np.arange(1, n + 1, dtype=np.int32),
                       np.zeros((n, 2), np.int32), np.full((n, 2), 0.5, np.float32))


def token_data(page: str) -> list[dict]:
    match = re.search(r'<script type="application/json" id="token-data">(.*?)</script>', page, re.S)
    return json.loads(match.group(1))


def test_hostile_text_is_escaped_everywhere():
    text = '</span><script>alert(1)</script><img src=x onerror=alert(2)>'
    cuts = [0, 7, 15, 24, len(text)]
    page = render(text, scores_for(text, cuts, [0.9, 0.5, 0.1, 0.2]), np.zeros(4, np.uint16), title="<b>t</b>",
                  top_names=[["</script>", "<x>"]] * 4)
    body = page.split('<script type="application/json"')[0]
    assert "<script>alert" not in page and "<img" not in body and "<b>t</b>" not in page
    shown = re.sub(r"<[^>]+>", "", body.split('<pre class="src">')[1].split("</pre>")[0])
    assert html.unescape(shown) == text and "&lt;script&gt;" in shown
    assert page.count("<script") == 2  # the token data and the tooltip code, nothing else
    assert "</script>" not in page.split('id="token-data">')[1].split("</script>")[0]
    data = token_data(page)
    assert data["top"][0][0] == "</script>"  # JSON round-trips the raw alternative


def test_token_data_carries_the_scores():
    text = "ab"
    s = scores_for(text, [0, 1, 2], [0.25, 0.75])
    data = token_data(render(text, s, np.array([CATEGORY_BIT["sync"], 0], np.uint16)))
    assert data["p"] == [0.25, 0.75] and data["rank"] == [1, 2] and data["bits"] == [CATEGORY_BIT["sync"], 0]
    assert data["categories"][5] == "sync" and data["top_p"][0] == [0.5, 0.5]


def test_colours_follow_the_signal():
    assert colour(0.0) == "#{:02x}{:02x}{:02x}".format(*LIGHT)
    p = np.array([1.0, 0.5, 0.0])
    assert intensity("probability", p, p, np.ones(3)).tolist() == [0.0, 0.5, 1.0]
    assert intensity("rank", p, p, np.array([1, 10, 1000])).tolist() == pytest.approx([0.0, 1 / 3, 1.0])
    with pytest.raises(ValueError, match="valid: probability, entropy, rank"):
        intensity("loss", p, p, p)


def test_outlines_category_filter_regions_and_masks():
    text = "if (i < n) x[i] = 0;"
    cuts = [0, 2, 4, 5, 7, 9, 10, len(text)]
    bits = np.array([0, 0, CATEGORY_BIT["bounds_guard"], CATEGORY_BIT["bounds_guard"], CATEGORY_BIT["bounds_guard"], 0, CATEGORY_BIT["index_math"]], np.uint16)
    s = scores_for(text, cuts, [0.9] * 7)
    page = render(text, s, bits)
    assert len(re.findall(r'class="t c\d+ s"', page)) == 4
    only = render(text, s, bits, only_category="index_math")
    assert len(re.findall(r'class="t c\d+ s"', only)) == 1 and len(re.findall(r'class="t c\d+ dim"', only)) == 6
    marked = render(text, s, bits, regions=[RegionMark(2, 4, "bounds guard")], masked=np.array([1, 0, 0, 0, 0, 0, 0], bool))
    assert marked.count('class="region"') == 1 and 'data-kind="bounds guard"' in marked
    assert len(re.findall(r'class="t c\d+ s? ?m"', marked)) == 1 and token_data(marked)["masked"][:2] == [1, 0]
    assert '<div class="gutter">1</div>' in page
    with pytest.raises(ValueError, match="Unknown category"):
        render(text, s, bits, only_category="magic")


def test_every_character_is_shown_once():
    text = "a\nbb\n  ccc\n"
    s = scores_for(text, [0, 1, 2, 4, 5, 10], [0.5] * 5)
    page = render(text, s, np.zeros(5, np.uint16))
    src = re.sub(r"<[^>]+>", "", page.split('<pre class="src">')[1].split("</pre>")[0])
    assert src == text
    assert '<div class="gutter">1\n2\n3</div>' in page
