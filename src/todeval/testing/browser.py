"""Headless Chromium for tests and benches: selenium with the system chromedriver.

Selenium Manager downloads drivers and fails offline, so the driver is always the Debian
``chromium-driver`` binary (``TODEVAL_CHROMEDRIVER`` / ``TODEVAL_CHROMIUM`` override the
paths). The flags keep Chromium from reaching for the network.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("TODEVAL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TODEVAL_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,1000",
)


def missing_parts() -> list[str]:
    """What is not installed of selenium, chromium and chromedriver."""
    missing = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium")
    missing.extend(path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists())
    return missing


def chromium_driver(profile: Path, *, browser_log: bool = False) -> Any:
    """A headless Chromium WebDriver with a fresh profile directory."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(arg)
    if browser_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
