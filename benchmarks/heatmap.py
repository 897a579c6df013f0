"""Time from page load to a rendered 2,000-token heatmap in the browser (aim: <= 1 s).

    python -m benchmarks.heatmap            # a 2,000-token sample
    python -m benchmarks.heatmap --small    # 500 tokens (what CI runs)

A sample of the wanted length is scored once (tiny model, fresh workspace), the dashboard is
started on it ($CUSET_DATA) and Debian's chromium (Playwright) opens the heatmap page: the time
is from navigation start until every token of the heatmap is in the page. Side by side, in the
same browser: the same heatmap document opened directly from a file (the rendering floor), and
the Python time to build the HTML. Needs /usr/bin/chromium (`apt-get install chromium`).
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
    page = render(sample.response, scores[0], bits)
    render_ms = (time.perf_counter() - t0) * 1e3
    (Path(os.environ["CUSET_WORKSPACE"]) / "long.html").write_text(page)
    return path, f"{render_ms:.1f}", len(scores[0])


def serve(data: Path) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "CUSET_MODEL": "tiny", "CUSET_DATA": str(data)}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port", str(port)],
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
    app_times, file_times, rerun_times = [], [], []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for attempt in range(repeats + 1):  # the first load warms the server's caches
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                page.goto(f"{url}/heatmap")
                frame = page.frame_locator("iframe").first
                frame.locator(f'.t[data-i="{n - 1}"]').wait_for(state="attached", timeout=120_000)
                elapsed = time.perf_counter() - t0
                if attempt:
                    app_times.append(elapsed)
                    # Within the session: the next sample, as a researcher steps through them.
                    t0 = time.perf_counter()
                    page.get_by_role("button", name="Next").click()
                    page.frame_locator("iframe").first.locator("h3", has_text="long-2").wait_for(timeout=60_000)
                    page.frame_locator("iframe").first.locator(f'.t[data-i="{n - 1}"]').wait_for(state="attached")
                    rerun_times.append(time.perf_counter() - t0)
                else:
                    cold = elapsed
                page.close()
                page = browser.new_page()
                t0 = time.perf_counter()
                page.goto((Path(os.environ["CUSET_WORKSPACE"]) / "long.html").as_uri())
                page.locator(f'.t[data-i="{n - 1}"]').wait_for(state="attached")
                file_times.append(time.perf_counter() - t0)
                page.close()
            browser.close()
    finally:
        proc.terminate()
    app, floor, rerun = statistics.median(app_times), statistics.median(file_times), statistics.median(rerun_times)
    print(f"heatmap of {n} tokens")
    print(f"  dashboard page load -> rendered  {app * 1e3:8.0f} ms median of {len(app_times)} (first load {cold * 1e3:.0f} ms; aim <= 1000 ms)")
    print(f"  next sample in the same session  {rerun * 1e3:8.0f} ms median")
    print(f"  same HTML opened from a file     {floor * 1e3:8.0f} ms  -> dashboard = {app / floor:.1f}x the floor")
    print(f"  Python: tag + render the HTML    {render_ms:>8} ms")
    print(json.dumps({"heatmap_tokens": n, "page_load_to_heatmap_ms": round(app * 1e3), "first_load_ms": round(cold * 1e3), "next_sample_ms": round(rerun * 1e3),
                      "static_file_ms": round(floor * 1e3), "dashboard_over_static": round(app / floor, 1), "render_ms": float(render_ms)}))


if __name__ == "__main__":
    main()
