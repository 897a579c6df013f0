"""A real browser against the running app: Streamlit on 127.0.0.1 (tiny model, a fresh
workspace) and Debian's chromium driven by Playwright (never `playwright install`).
Screenshots go to test-output/screenshots/.

Without /usr/bin/chromium these tests skip on a developer machine and fail in CI (CI=true),
where .ci/run installs it."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = REPO / "test-output" / "screenshots"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(workspace: Path, log_name: str = "streamlit.log") -> tuple[subprocess.Popen, str]:
    """A dashboard server on a free loopback port (the tiny model, `workspace`), started the
    way `make run` starts it (cuset.serve); returns (process, url) once it answers."""
    port = _free_port()
    env = {**os.environ, "CUSET_WORKSPACE": str(workspace), "CUSET_MODEL": "tiny"}
    log = open(workspace / log_name, "w")  # noqa: SIM115 - the process owns it until it ends
    proc = subprocess.Popen(
        [sys.executable, "-m", "cuset.serve", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    pytest.fail(f"streamlit did not start: {(workspace / log_name).read_text()[-2000:]}")


@pytest.fixture(scope="package", autouse=True)
def _browser_workspace(_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A workspace of the browser tests' own. They assert on what the app lists (jobs, runs),
    so they need one that other tests have not written to; `make test` runs modules in two
    processes in no fixed order, and a process's workspace holds whatever ran there before."""
    path = tmp_path_factory.mktemp("browser-workspace")
    os.environ["CUSET_WORKSPACE"] = str(path)
    yield path
    os.environ["CUSET_WORKSPACE"] = str(_workspace)


@pytest.fixture(scope="package")
def app_url(_browser_workspace: Path) -> Iterator[str]:
    proc, url = start_app(_browser_workspace)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Debian's chromium at /usr/bin/chromium (.ci/run installs it).")
        pytest.skip("no /usr/bin/chromium on this machine (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def screenshot(page, name: str) -> Path:
    """The whole page: Streamlit scrolls its main area inside the window, so the window is
    made as tall as that content for the shot (at most 8,000 px), then put back."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    size = page.viewport_size
    tall = page.evaluate("() => Math.max(document.body.scrollHeight, ...[...document.querySelectorAll("
                         "'[data-testid=stMain], [data-testid=stAppViewContainer], [data-testid=stSidebarContent]')].map(e => e.scrollHeight))")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(tall, size["height"]), 8000))})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path


def wait_idle(page, timeout: float = 90.0) -> None:
    """Wait until Streamlit is idle: no running-status widget, no spinner, and the page text
    unchanged for a second."""
    deadline = time.time() + timeout
    last, stable_since = None, time.time()
    while time.time() < deadline:
        busy = page.locator('[data-testid="stStatusWidget"], [data-testid="stSpinner"]').count() > 0
        text = page.inner_text("body")
        if busy or text != last:
            last, stable_since = text, time.time()
        elif time.time() - stable_since > 1.0:
            return
        page.wait_for_timeout(200)
    raise AssertionError("the app did not become idle in time")


def metric_value(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def screenshot_element(locator, name: str) -> Path:
    """A screenshot of one element (e.g. a heatmap's iframe): a page's full-page screenshot
    stops at the window, since Streamlit scrolls its main area inside the page."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path


def heatmap_tooltip(page, app_url: str, nth: int) -> str:
    """Open the heatmap page, hover the nth token that holds a word character, and return the
    tooltip's text."""
    page.goto(f"{app_url}/heatmap")
    frame = page.frame_locator("iframe").first
    token = frame.locator(".t", has_text=re.compile(r"\w")).nth(nth)
    token.wait_for(timeout=90_000)
    wait_idle(page)
    token.hover()
    tip = frame.locator("#tip")
    tip.wait_for(state="visible")
    return tip.inner_text()
