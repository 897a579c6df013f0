"""Time until a 2,000-token heatmap is visible in the browser: after navigating to the page
within a session (aim <= 1 s) and on a cold load of the page in a new session (aim <= 2 s).

    python -m benchmarks.heatmap            # a 2,000-token sample
    python -m benchmarks.heatmap --small    # 500 tokens (what CI runs)

A sample of the wanted length is scored once (tiny model, fresh workspace), the dashboard is
started on it ($CUSET_DATA) and Debian's chromium (Playwright) measures, side by side:
- cold load: a new tab (a new Streamlit session) opens /heatmap; from navigation start until the
  last token of the heatmap is in the page (the server's very first load is reported apart);
- navigation: in a session already showing Home, a click on the sidebar's "Confidence heatmap"
  link until the last token is in the page;
- next sample: the "Next" button on the heatmap page, until the next sample's last token;
- the floor: the same heatmap document opened directly from a file; and the Python time to
  build the HTML, and its size.
Needs /usr/bin/chromium (`apt-get install chromium`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def long_sample(tokens: int) -> tuple[Path, str, int]:
    """A JSONL file with one bundled-corpus response repeated to ~`tokens` tokens, scored."""
    from cuset import models
    from cuset.confidence import ScoreConfig, score_samples
    from cuset.data import Sample, load

    _, tokenizer, _ = models.load("tiny")
    parts, count = [], 0
    for sample in load("bundled"):
        parts.append(sample.response)
        count += len(tokenizer(sample.response, add_special_tokens=False).input_ids)
        if count >= tokens:
            break
    text = "\n".join(parts)
    ids = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    cut = ids["offset_mapping"][min(tokens, len(ids["input_ids"])) - 1][1]
    sample = Sample(id="long", instruction="", response=text[:cut])
    second = Sample(id="long-2", instruction="", response=text[:cut] + "\n")
    scores, _ = score_samples([sample, second], ScoreConfig(model="tiny", max_length=tokens + 64))
    path = Path(os.environ["CUSET_WORKSPACE"]) / "long.jsonl"
    path.write_text(json.dumps(sample.to_json()) + "\n" + json.dumps(second.to_json()) + "\n")
    from cuset.confidence import token_categories
    from cuset.heatmap import render
    from cuset.sensitivity import tag

    t0 = time.perf_counter()
    bits, _, _ = token_categories(scores[0], tag(sample.response))
    page = render(sample.response, scores[0], bits, tokenizer=tokenizer)
    render_ms = (time.perf_counter() - t0) * 1e3
    (Path(os.environ["CUSET_WORKSPACE"]) / "long.html").write_text(page)
    return path, f"{render_ms:.1f}", len(scores[0])


def serve(data: Path) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "CUSET_MODEL": "tiny", "CUSET_DATA": str(data)}
    proc = subprocess.Popen([sys.executable, "-m", "cuset.serve", "--server.port", str(port)],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("streamlit did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tokens = 500 if args.small else args.tokens
    repeats = 2 if args.small else args.repeats
    os.environ["CUSET_WORKSPACE"] = tempfile.mkdtemp(prefix="cuset-bench-")
    os.environ.setdefault("CUSET_MODELS_DIR", str(REPO / "workspace" / "models"))
    data, render_ms, n = long_sample(tokens)
    from playwright.sync_api import sync_playwright

    proc, url = serve(data)
    cold_times, nav_times, file_times, rerun_times = [], [], [], []
    last = f'.t[data-i="{n - 1}"]'
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for attempt in range(repeats + 1):  # the first load warms the server's caches
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                page.goto(f"{url}/heatmap")
                page.frame_locator("iframe").first.locator(last).wait_for(state="attached", timeout=120_000)
                elapsed = time.perf_counter() - t0
                if not attempt:
                    first_load = elapsed
                    page.close()
                    continue
                cold_times.append(elapsed)
                # Within the session: the next sample, as a researcher steps through them.
                t0 = time.perf_counter()
                page.get_by_role("button", name="Next").click()
                page.frame_locator("iframe").first.locator("h3", has_text="long-2").wait_for(timeout=60_000)
                page.frame_locator("iframe").first.locator(last).wait_for(state="attached")
                rerun_times.append(time.perf_counter() - t0)
                page.close()
                # Within a session: Home first, then the sidebar's link to the heatmap page.
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(url)
                page.get_by_text("Scored under this model").wait_for(timeout=60_000)
                link = page.get_by_role("link", name="Confidence heatmap")
                link.wait_for(timeout=60_000)
                page.wait_for_timeout(500)
                t0 = time.perf_counter()
                link.click()
                page.frame_locator("iframe").first.locator(last).wait_for(state="attached", timeout=60_000)
                nav_times.append(time.perf_counter() - t0)
                page.close()
                page = browser.new_page()
                t0 = time.perf_counter()
                page.goto((Path(os.environ["CUSET_WORKSPACE"]) / "long.html").as_uri())
                page.locator(last).wait_for(state="attached")
                file_times.append(time.perf_counter() - t0)
                page.close()
            browser.close()
    finally:
        proc.terminate()
    cold, nav, floor, rerun = (statistics.median(t) for t in (cold_times, nav_times, file_times, rerun_times))
    html_kb = (Path(os.environ["CUSET_WORKSPACE"]) / "long.html").stat().st_size / 1024
    print(f"heatmap of {n} tokens ({html_kb:.0f} KB of HTML)")
    print(f"  navigation within a session -> visible  {nav * 1e3:8.0f} ms median of {len(nav_times)} (aim <= 1000 ms)")
    print(f"  cold page load (new session) -> visible {cold * 1e3:8.0f} ms median of {len(cold_times)} (aim <= 2000 ms; server's first load {first_load * 1e3:.0f} ms)")
    print(f"  next sample in the same session         {rerun * 1e3:8.0f} ms median")
    print(f"  same HTML opened from a file            {floor * 1e3:8.0f} ms  -> cold load = {cold / floor:.1f}x the floor")
    print(f"  Python: tag + render the HTML           {render_ms:>8} ms")
    print(json.dumps({"heatmap_tokens": n, "navigation_ms": round(nav * 1e3), "cold_load_ms": round(cold * 1e3), "page_load_to_heatmap_ms": round(cold * 1e3),
                      "first_load_ms": round(first_load * 1e3), "next_sample_ms": round(rerun * 1e3), "static_file_ms": round(floor * 1e3),
                      "dashboard_over_static": round(cold / floor, 1), "render_ms": float(render_ms), "html_kb": round(html_kb)}))


if __name__ == "__main__":
    main()
