"""Check the built results site in a real browser: ``python -m compendium.pipeline.sitecheck``.

Headless Chromium (Debian's ``chromium``, driven by Playwright) opens every HTML page of the site from
``file://``, and the check fails on a link to a page or file that does not exist, an image that does
not load, a console error, a table wider than the page's column, or any request that leaves the machine (the
site must work offline). It saves screenshots of the home page and of ReLA's page (``build/site-check/home.png``,
``paper-rela.png``) and prints what it saw.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from compendium.core import paths

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


@dataclass
class Report:
    pages: int = 0
    images: int = 0
    links: int = 0
    tables: int = 0
    problems: list[str] = field(default_factory=list)
    screenshot: Path | None = None


def chromium() -> str:
    """The path of a Chromium binary, or a clear error naming the fix."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError(
        "no Chromium found: install Debian's `chromium` (apt-get install chromium; "
        "`make setup` does it where apt is available)"
    )


#: Every table of a page's article: its full width and the width of the article's column (px).
TABLE_WIDTHS = """() => { const main = document.querySelector('article') || document.body;
  return Array.from(main.querySelectorAll('table')).map(t => [t.scrollWidth, main.clientWidth]); }"""


def _local_target(href: str, page: Path) -> Path | None:
    """The file a relative or file:// link points to (None for in-page anchors and other schemes)."""
    u = urlparse(href)
    if u.scheme in ("http", "https", "mailto", "javascript", "data"):
        return None
    if u.scheme == "file":
        return Path(unquote(u.path))
    if not u.path:
        return None
    return (page.parent / unquote(u.path)).resolve()


def check(site: Path, screenshot: Path | None = None) -> Report:
    """Visit every page under ``site`` and return what was seen (``problems`` empty when all is well)."""
    from playwright.sync_api import sync_playwright  # the browser driver is needed here only

    site = Path(site).resolve()
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)
    if not pages:
        raise FileNotFoundError(f"no pages under {site}: build the site first (python -m compendium.pipeline.site)")
    rep = Report(pages=len(pages))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        current: list[str] = [""]
        page.on(
            "console",
            lambda m: rep.problems.append(f"{current[0]}: console {m.type}: {m.text}") if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: rep.problems.append(f"{current[0]}: script error: {e}"))
        page.on(
            "request",
            lambda r: (
                rep.problems.append(f"{current[0]}: request to the internet: {r.url}")
                if urlparse(r.url).scheme in ("http", "https")
                else None
            ),
        )
        page.on("requestfailed", lambda r: rep.problems.append(f"{current[0]}: failed to load {r.url}"))
        for p in pages:
            current[0] = str(p.relative_to(site))
            page.goto(p.as_uri(), wait_until="load")
            for src, ok in page.eval_on_selector_all(
                "img", "els => els.map(e => [e.currentSrc || e.src, e.complete && e.naturalWidth > 0])"
            ):
                rep.images += 1
                if not ok:
                    rep.problems.append(f"{current[0]}: image does not load: {src}")
            for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
                target = _local_target(href, p)
                if target is None:
                    continue
                rep.links += 1
                if not target.exists():
                    rep.problems.append(f"{current[0]}: broken link {href}")
            for width, column in page.evaluate(TABLE_WIDTHS):
                rep.tables += 1
                if width > column + 2:
                    rep.problems.append(f"{current[0]}: a table {width} px wide in a column of {column} px")
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.goto((site / "index.html").as_uri(), wait_until="load")
            page.screenshot(path=str(screenshot), full_page=False)
            rep.screenshot = screenshot
            paper = site / "papers" / "rela.html"
            if paper.is_file():  # one paper page too: its forest plot and claims table
                page.goto(paper.as_uri(), wait_until="load")
                page.screenshot(path=str(screenshot.with_name("paper-rela.png")), full_page=False)
        browser.close()
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Open every page of the results site in headless Chromium.")
    ap.add_argument("--site", type=Path, default=paths.REPORTS / "site")
    ap.add_argument("--screenshot", type=Path, default=paths.BUILD / "site-check" / "home.png")
    args = ap.parse_args(argv)
    rep = check(args.site, args.screenshot)
    print(
        f"[site-check] {rep.pages} pages, {rep.links} local links, {rep.images} images, {rep.tables} tables; "
        f"{len(rep.problems)} problems; home page screenshot: {rep.screenshot}"
    )
    for line in rep.problems[:50]:
        print(f"  {line}")
    return 1 if rep.problems else 0


if __name__ == "__main__":
    sys.exit(main())
