"""The documentation's relative links lead somewhere: README.md, BENCHMARKS.md and docs/.

A link to a file must name one that exists (relative to the page, as GitHub resolves it);
a link with ``#anchor`` must name a heading of its target page, slugged as GitHub does. Links
to web addresses are not followed (the tests run offline). Links inside code are not links.
Every page under docs/ is reached from README.md or BENCHMARKS.md, so none is orphaned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").rglob("*.md")])
FENCED = re.compile(r"^```.*?^```$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """``text`` without code: fenced blocks and inline spans."""
    return INLINE_CODE.sub("", FENCED.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lowercased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = text.replace("`", "").replace("*", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, heading in HEADING.findall(FENCED.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(page: Path) -> list[str]:
    return LINK.findall(prose(page.read_text(encoding="utf-8")))


def test_the_pages_are_there():
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert {"README.md", "BENCHMARKS.md", "docs/layout.md", "docs/benchmarks/conversations.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(ROOT).as_posix() for page in PAGES])
def test_relative_links_resolve(page: Path):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists() or ROOT not in (resolved, *resolved.parents):
            broken.append(f"{target}: no such file in the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_every_docs_page_is_reached_from_the_readme_or_benchmarks():
    reached: set[Path] = set()
    todo = [ROOT / "README.md", ROOT / "BENCHMARKS.md"]
    while todo:
        page = todo.pop()
        if page in reached:
            continue
        reached.add(page)
        for target in links(page):
            path = target.partition("#")[0]
            if path.endswith(".md") and not re.match(r"[a-z][a-z0-9+.-]*:", path):
                linked = (page.parent / path).resolve()
                if linked.exists():
                    todo.append(linked)
    orphans = [page.relative_to(ROOT).as_posix() for page in PAGES if page.resolve() not in reached]
    assert not orphans, f"pages no link reaches: {orphans}"


def test_the_slugs_follow_github():
    assert slug("The query head (`query_mode=\"hidden\"`)") == "the-query-head-query_modehidden"
    assert slug("Opening a local store: the index check, and `doctor`'s probe") == (
        "opening-a-local-store-the-index-check-and-doctors-probe"
    )
    assert slug("Query latency, one user, k=4") == "query-latency-one-user-k4"


def test_every_recall_config_field_has_a_row_in_configuration_md():
    """README calls docs/configuration.md every setting: ``plain_notes`` had no row until 2026-12-07 (a reviewer)."""
    import dataclasses

    from recall_core import RecallConfig

    text = (ROOT / "docs" / "configuration.md").read_text()
    rows = {name for cell in re.findall(r"^\| ([^|]+) \|", text, re.MULTILINE) for name in re.findall(r"`(\w+)`", cell)}
    assert {f.name for f in dataclasses.fields(RecallConfig)} - rows == set()
