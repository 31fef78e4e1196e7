"""The app's navigation as data: its pages, section by section, each with its icon and URL.

A page goes by one name (docs/architecture.md): the page ``name`` is the script ``app_pages/<name>.py``,
titled in the navigation by the catalog's ``app.nav_<name>``, and served at ``/<name>`` unless its URL
is spelled otherwise (an entry's third field: the URLs people linked to before the pages took one name).
app.py builds Streamlit's pages from these tables; tests and scripts read them without running Streamlit.
"""

from __future__ import annotations

from typing import NamedTuple


class NavPage(NamedTuple):
    name: str  # the page's one name: its script's stem
    icon: str
    url: str | None = None  # its URL path, where it is not the name

    @property
    def script(self) -> str:
        return f"app_pages/{self.name}.py"

    @property
    def title_key(self) -> str:
        return f"app.nav_{self.name}"

    @property
    def url_path(self) -> str:
        return self.url or self.name


# The playground is the default page, at "/"; "start" is only the url_path Streamlit requires.
START = NavPage("playground", "🧮", "start")
LABS = (
    NavPage("scaling", "📏", "why-sqrt-dk"),
    NavPage("masks", "🎭"),
    NavPage("multihead", "🧩", "multi-head"),
    NavPage("cost", "📈"),
    NavPage("block", "🧱"),
    NavPage("lookalikes", "🔀"),
    NavPage("positions", "🧭"),
    NavPage("inference", "⚡"),
    NavPage("quiz", "✅"),
    NavPage("decoder", "🤖"),
    NavPage("heads", "🔬"),
    NavPage("training", "🏋️"),
)
PRACTICE = (NavPage("path", "🗺️"), NavPage("worksheet", "📝"), NavPage("codecheck", "⌨️", "code_check"))
# Live class: the teacher's panel and the students' join page (/class_join?code=...).
CLASS = (NavPage("class_teach", "🧑‍🏫"), NavPage("class_join", "📱"))
PAGES = (START, *LABS, *PRACTICE, *CLASS)

# URL paths spelled before the pages took one name -> the URL path that serves the page now.
OLD_URL_PATHS = {"why_sqrt_dk": "why-sqrt-dk", "multi_head": "multi-head"}


def redirects() -> dict[str, str]:
    """Every URL path that reaches a page without being its own -> the page's URL path: the old
    spellings, and each page's name where its URL is spelled otherwise (the playground's, at "/",
    too). Streamlit's legacy file list linked pages by file name, and a first run opens a page by its
    file name (AppTest, before st.navigation has run). A redirect keeps the link's query string."""
    by_name = {p.name: "" if p is START else p.url_path for p in PAGES if p.url}
    return OLD_URL_PATHS | by_name


def served() -> dict[str, str]:
    """URL path -> the page (its one name) that a visit opens: each page's URL, "/" for the playground,
    and every redirect."""
    urls = {p.url_path: p.name for p in PAGES} | {"": START.name}
    return urls | {old: urls[new] for old, new in redirects().items()}
