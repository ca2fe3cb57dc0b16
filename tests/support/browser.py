"""Render a page in a real headless Chromium and look at the pixels, as a person opening the report would.

The browser is Debian's ``chromium-headless-shell`` (or ``chromium``), which ``scripts/bootstrap.sh`` installs
with apt where it runs as root. Without one, the tests that need it skip with one line saying so, unless
``AIV_REQUIRE_BROWSER=1``, in which case its absence fails the run instead of hiding in a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
INSTALL_HINT = "apt-get install chromium-headless-shell (scripts/bootstrap.sh does it as root)"


def browser() -> str:
    """The browser's path, or skip (fail with AIV_REQUIRE_BROWSER=1) when none is installed."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    message = f"no headless Chromium on PATH ({', '.join(BROWSERS)}): {INSTALL_HINT}"
    if os.environ.get("AIV_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


def screenshot(page: Path, png: Path, size: tuple[int, int] = (1200, 1600)) -> Image.Image:
    """A screenshot of ``page`` (a local file) at ``size``, as an RGB image."""
    profile = png.with_suffix(".profile")
    command = [
        browser(),
        "--headless",
        "--no-sandbox",  # tests run as root, where the sandbox refuses to start
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
        f"--screenshot={png}",
        page.resolve().as_uri(),
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0 and png.is_file(), completed.stderr[-2000:]
    with Image.open(png) as image:
        return image.convert("RGB")


def colour_pixels(image: Image.Image, colour: str, tolerance: int = 10) -> int:
    """How many pixels are within ``tolerance`` (per channel) of ``colour`` (``#rrggbb``)."""
    target = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return sum(
        count
        for count, pixel in image.getcolors(maxcolors=image.width * image.height) or []
        if all(abs(a - b) <= tolerance for a, b in zip(pixel, target, strict=True))
    )


def standalone_page(svg: str, path: Path) -> Path:
    """One chart alone on a white page, so its pixels are the only coloured ones."""
    path.write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0;background:#fff">{svg}'
        "</body></html>\n",
        encoding="utf-8",
    )
    return path


__all__ = ["browser", "colour_pixels", "screenshot", "standalone_page"]
