"""The heatmap renderer: colours, outlines, regions in their lane and snapped to identifiers,
masks, rows with line numbers, decoded top-k, and escaping of hostile code."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest

from cuset.confidence import TokenScores
from cuset.heatmap import (
    LIGHT,
    RegionMark,
    colour,
    decode_alternatives,
    intensity,
    render,
    snap_marks,
    snap_rows,
    snap_to_words,
    visible_whitespace,
)
from cuset.sensitivity import CATEGORY_BIT


def scores_for(text: str, cuts: list[int], p: list[float]) -> TokenScores:
    starts = np.array(cuts[:-1], dtype=np.int32)
    ends = np.array(cuts[1:], dtype=np.int32)
    n = len(p)
    return TokenScores("s", np.zeros(n, np.int32), starts, ends, np.array(p, np.float32), np.log(np.array(p, np.float32)),
                       np.linspace(0, 5, n).astype(np.float32), np.arange(1, n + 1, dtype=np.int32),
                       np.zeros((n, 2), np.int32), np.full((n, 2), 0.5, np.float32))


def token_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="token-data">(.*?)</script>', page, re.S)
    return json.loads(match.group(1))


def code_lines(page: str) -> list[str]:
    """The text of each code row, as a reader sees it (tags stripped, entities decoded)."""
    return [html.unescape(re.sub(r"<[^>]+>", "", row)) for row in re.findall(r'<div class="lc">(.*?)</div></div>', page, re.S)]


def line_numbers(page: str) -> list[str]:
    return re.findall(r'<div class="ln">(\d+)</div>', page)


def test_hostile_text_is_escaped_everywhere():
    text = '</span><script>alert(1)</script><img src=x onerror=alert(2)>'
    cuts = [0, 7, 15, 24, len(text)]
    page = render(text, scores_for(text, cuts, [0.9, 0.5, 0.1, 0.2]), np.zeros(4, np.uint16), title="<b>t</b>",
                  top_names=[["</script>", "<x>"]] * 4, regions=[RegionMark(1, 2, "<b>kind</b>")])
    body = page.split('<script type="application/json"')[0]
    assert "<script>alert" not in page and "<img" not in body and "<b>t</b>" not in page and "<b>kind" not in page
    assert code_lines(page) == [text] and "&lt;script&gt;" in body
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
    named = token_data(render(text, s, np.zeros(2, np.uint16), category_names=[f"kind {k}" for k in range(12)]))
    assert named["categories"][5] == "kind 5"


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
    # the label sits in the lane cell of its row, never inside the code cell
    assert '<div class="lab"><span class="rl" data-r="0" title="bounds guard">bounds guard</span></div><div class="ln">1</div>' in marked
    assert 'class="rl"' not in "".join(re.findall(r'<div class="lc">(.*?)</div></div>', marked))
    assert line_numbers(page) == ["1"] and 'class="lab"' not in page  # no lane without regions
    with pytest.raises(ValueError, match="Unknown category"):
        render(text, s, bits, only_category="magic")


def test_every_character_is_shown_once_one_row_per_line():
    text = "a\nbb\n  ccc\n"
    s = scores_for(text, [0, 1, 2, 4, 5, 10], [0.5] * 5)
    page = render(text, s, np.zeros(5, np.uint16))
    assert "\n".join(code_lines(page)) + "\n" == text
    assert line_numbers(page) == ["1", "2", "3"]
    # a token holding a newline ("b\n" here: chars 3-5) is split over two rows with the same data-i
    s2 = scores_for(text, [0, 2, 3, 5, 11], [0.5] * 4)
    page2 = render(text, s2, np.zeros(4, np.uint16))
    assert "\n".join(code_lines(page2)) + "\n" == text
    assert len(re.findall(r'data-i="2"', page2)) == 2


def test_long_lines_wrap_by_default_and_can_scroll_instead():
    text = "x" * 400 + "\nshort"
    s = scores_for(text, [0, 400, len(text)], [0.5, 0.5])
    assert 'class="code"' in render(text, s, np.zeros(2, np.uint16))
    assert 'class="code nowrap"' in render(text, s, np.zeros(2, np.uint16), wrap=False)
    assert 'id="wrap" checked' in render(text, s, np.zeros(2, np.uint16))


RESTRICT = "float* __restrict__ x"
# the pieces a byte-level BPE makes of it: "float", "*", " __", "rest", "rict", "__", " x"
RESTRICT_CUTS = [0, 5, 6, 9, 13, 17, 19, 21]


def test_regions_snap_to_whole_identifiers():
    starts, ends = np.array(RESTRICT_CUTS[:-1]), np.array(RESTRICT_CUTS[1:])
    assert snap_to_words(RESTRICT, starts, ends, 4, 4) == (2, 5)  # "rict" -> " __restrict__"
    assert snap_to_words(RESTRICT, starts, ends, 5, 5) == (2, 5)  # a lone "__" -> the whole name
    assert snap_to_words(RESTRICT, starts, ends, 6, 6) == (6, 6)  # " x" is whole already
    assert snap_to_words(RESTRICT, starts, ends, 0, 0) == (0, 0)  # "float" ends before "*"
    merged = snap_marks(RESTRICT, starts, ends, [RegionMark(3, 3, "kernel qualifier"), RegionMark(5, 6, "index math")])
    assert merged == [RegionMark(2, 6, "kernel qualifier + index math")]  # snapped into each other: one region
    rows = snap_rows([{"tokens": [4, 4], "chars": [13, 17], "text": "rict", "line": 1, "lines": "1"}], RESTRICT, starts, ends)
    assert rows[0]["text"] == " __restrict__" and rows[0]["tokens"] == [2, 5] and rows[0]["chars"] == [6, 19]
    s = scores_for(RESTRICT, RESTRICT_CUTS, [0.5] * 7)
    page = render(RESTRICT, s, np.zeros(7, np.uint16), regions=[RegionMark(4, 4, "kernel qualifier")])
    region = re.search(r'<span class="region"[^>]*>(.*?)</span></span>', page).group(0)
    assert html.unescape(re.sub(r"<[^>]+>", "", region)) == " __restrict__"


def test_a_region_over_several_lines_reopens_on_each_row():
    text = "if (i < n)\n  return;"
    cuts = [0, 2, 4, 5, 7, 9, 10, 13, 19, 20]
    s = scores_for(text, cuts, [0.5] * 9)
    page = render(text, s, np.zeros(9, np.uint16), regions=[RegionMark(2, 7, "bounds guard")])
    first, second = re.findall(r'<div class="lc">(.*?)</div></div>', page, re.S)
    for row in (first, second):
        assert row.count("<span") == row.count("</span>")  # each row is well-formed on its own
    assert 'class="region"' in first and 'class="region cont"' in second
    assert page.count('class="rl"') == 1  # one label, on the row where the region starts
    assert code_lines(page) == ["if (i < n)", "  return;"]


def test_top_k_alternatives_are_decoded_with_visible_whitespace(tiny):
    _, tokenizer, _ = tiny
    ids = tokenizer.convert_tokens_to_ids(["Ġheartfelt", "Ċ", "__", "Ġ__"])
    assert visible_whitespace(" a\n\tb") == "·a⏎→b"
    assert decode_alternatives(tokenizer, np.array([ids[:2], ids[2:]])) == [["·heartfelt", "⏎"], ["__", "·__"]]
    text = "ab"
    s = scores_for(text, [0, 1, 2], [0.25, 0.75])
    s.topk_ids[:] = [ids[0], ids[1]]
    assert token_data(render(text, s, np.zeros(2, np.uint16), tokenizer=tokenizer))["top"][0] == ["·heartfelt", "⏎"]


def test_the_lane_names_each_kind_once_per_row_with_a_count():
    text = "__global__ void k(float* __restrict__ x)"
    cuts = [0, 10, 15, 17, 18, 23, 24, 37, 39, 40]
    s = scores_for(text, cuts, [0.5] * 9)
    page = render(text, s, np.zeros(9, np.uint16), regions=[RegionMark(0, 0, "kernel qualifier"), RegionMark(6, 6, "kernel qualifier"), RegionMark(8, 8, "index math")])
    lane = re.search(r'<div class="lab">(.*?)</div>', page).group(1)
    assert re.sub(r"<[^>]+>", "|", lane).strip("|").split("||") == ["kernel qualifier ×2", "index math"]
    assert 'data-r="0 1"' in lane and page.count('class="region"') == 3
