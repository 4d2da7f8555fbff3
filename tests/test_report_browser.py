"""`sigmatool report`'s page in a real browser: headless Chromium, offline, at laptop and phone sizes, and
printed.

Runs with `make test-browser` (which installs Debian's chromium and chromium-driver when missing and run
as root); elsewhere it skips, naming the command that installs them.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.conftest import BIGMATH

pytestmark = pytest.mark.browser

INSTALL = "apt-get install -y chromium chromium-driver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)
FIGURES = ("difficulty", "silent", "budget", "groupsize")
PHONE = (390, 844)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sigmatool report` on the bundled sample, run as a user runs it."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    command = [sys.executable, "-m", "sigmatool", "report", str(BIGMATH), "-o", str(path)]
    subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return path


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip(f"headless Chromium is not installed: run `{INSTALL}` (make test-browser does, as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    # Offline: any request for something outside the page would fail, and be seen failing.
    driver.execute_cdp_cmd("Network.enable", {})
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def loaded(browser: Any, report_file: Path) -> dict[str, list[dict[str, Any]]]:
    """Open the report at laptop size; the console messages of the load and the network events of the
    requests the report's document made (the browser's start page may still be finishing its own)."""
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get_log("performance")
    browser.get(report_file.as_uri())
    console = browser.get_log("browser")
    events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    sent = [e for e in events if e["method"] == "Network.requestWillBeSent"]
    ours = {e["params"]["requestId"] for e in sent if e["params"].get("documentURL") == report_file.as_uri()}
    network = [
        e for e in events if e["method"].startswith("Network.") and e["params"].get("requestId") in ours
    ]
    return {"console": console, "events": network}


def full_page_png(browser: Any) -> bytes:
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    return base64.b64decode(shot["data"])


def colours(png: bytes) -> int:
    """Distinct colours of a screenshot (capped at 2**16)."""
    found = Image.open(io.BytesIO(png)).convert("RGB").getcolors(maxcolors=2**16)
    return 2**16 if found is None else len(found)


def figure_sizes(browser: Any) -> list[tuple[float, float]]:
    script = (
        "return Array.from(document.querySelectorAll('figure.plot svg'))"
        ".map(s => [s.getBoundingClientRect().width, s.getBoundingClientRect().height, s.getBBox().width])"
    )
    return [(w * min(1.0, b), h) for w, h, b in browser.execute_script(script)]


def test_the_console_shows_no_error(loaded: dict[str, list[dict[str, Any]]]) -> None:
    assert [] == [m for m in loaded["console"] if m["level"] == "SEVERE"]


def test_no_request_fails(loaded: dict[str, list[dict[str, Any]]]) -> None:
    assert [] == [e for e in loaded["events"] if e["method"] == "Network.loadingFailed"]


def test_the_page_asks_for_nothing_but_itself(
    loaded: dict[str, list[dict[str, Any]]], report_file: Path
) -> None:
    urls = {
        e["params"]["request"]["url"] for e in loaded["events"] if e["method"] == "Network.requestWillBeSent"
    }
    assert {report_file.as_uri()} == {u for u in urls if not u.startswith("data:")}


def test_every_figure_is_drawn(loaded: dict[str, list[dict[str, Any]]], browser: Any) -> None:
    sizes = figure_sizes(browser)
    assert len(FIGURES) == len(sizes)
    assert all(w > 0 and h > 0 for w, h in sizes), sizes


def test_every_section_has_its_figure(loaded: dict[str, list[dict[str, Any]]], browser: Any) -> None:
    found = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure.plot')).map(f => f.id)"
    )
    assert [f"figure-{key}" for key in FIGURES] == found


def test_the_laptop_screenshot_is_not_blank(
    loaded: dict[str, list[dict[str, Any]]], browser: Any, tmp_path: Path
) -> None:
    png = full_page_png(browser)
    (tmp_path / "laptop.png").write_bytes(png)
    assert colours(png) > 1


def test_a_phone_needs_no_sideways_scrolling(loaded: dict[str, list[dict[str, Any]]], browser: Any) -> None:
    browser.set_window_size(*PHONE)
    overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0


def test_a_phone_shows_every_figure(
    loaded: dict[str, list[dict[str, Any]]], browser: Any, tmp_path: Path
) -> None:
    browser.set_window_size(*PHONE)
    sizes = figure_sizes(browser)
    png = full_page_png(browser)
    (tmp_path / "phone.png").write_bytes(png)
    assert all(w > 0 and h > 0 for w, h in sizes), sizes
    assert colours(png) > 1


def test_print_hides_the_navigation(loaded: dict[str, list[dict[str, Any]]], browser: Any) -> None:
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        shown = browser.execute_script("return getComputedStyle(document.querySelector('nav')).display")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert "none" == shown


def test_the_page_prints_to_pdf(
    loaded: dict[str, list[dict[str, Any]]], browser: Any, tmp_path: Path
) -> None:
    pdf = base64.b64decode(browser.execute_cdp_cmd("Page.printToPDF", {"printBackground": False})["data"])
    (tmp_path / "report.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF")
