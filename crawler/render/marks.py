"""The signs of a page built by its scripts, read from the tree extraction parsed (Scrapy-free).

A page that needs JavaScript has little or no main text and at least one of: an empty mount
point (``<div id="root">``, ``<div id="__next">``, ``<app-root>``), a ``<noscript>`` asking
for JavaScript, a framework's marks (``__NEXT_DATA__``, Nuxt's payload, ``ng-version``) or
scripts that far outweigh its text. One walk over the tree, only for pages with little text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html
from lxml import etree

#: Main text (characters) below which a page may be one that its scripts write.
THIN_TEXT = 200
#: Visible text (characters, all of the page's) below which scripts alone mark the page.
TINY_TEXT = 100
#: Inline script characters per visible text character above which the page is script-built.
SCRIPT_WEIGHT = 3
#: ``id`` values frameworks mount their application on.
MOUNT_IDS = frozenset(
    {"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "main-app", "react-root", "q-app"}
)
#: Custom elements and attributes of framework shells (Angular's ``<app-root>``).
MOUNT_TAGS = frozenset({"app-root", "app"})
FRAMEWORK_ATTRIBUTES = (
    "ng-version",
    "data-reactroot",
    "ng-app",
    "data-v-app",
    "data-server-rendered",
)
_FRAMEWORK_SCRIPT = re.compile(
    r"window\.__(?:NUXT|INITIAL_STATE|PRELOADED_STATE|APOLLO_STATE|remixContext)__?"
)
_ASKS_FOR_JS = re.compile(r"javascript|enable\s+js|\bjs\b", re.I)
_INVISIBLE = frozenset({"script", "style", "noscript", "template"})


@dataclass
class ScriptMarks:
    """What the page's markup says about its scripts (counted by :func:`script_marks` as it
    walks the tree)."""

    #: Characters of visible text (outside scripts, styles, noscript, templates).
    text_chars: int = 0
    #: Characters of inline scripts, and scripts loaded from a URL.
    script_chars: int = 0
    external_scripts: int = 0
    #: A framework's mount point with no text in it.
    empty_mount: bool = False
    #: A ``<noscript>`` that asks for JavaScript.
    noscript_asks: bool = False
    #: A framework's marks (its data scripts, attributes).
    framework: bool = False

    @property
    def script_built(self) -> bool:
        """Whether the page looks written by its scripts (whatever text it has)."""
        heavy = self.script_chars > SCRIPT_WEIGHT * max(self.text_chars, 1)
        bare = self.external_scripts > 0 and self.text_chars < TINY_TEXT
        return (
            self.empty_mount
            or self.noscript_asks
            or heavy
            or bare
            or (self.framework and self.text_chars < TINY_TEXT)
        )

    def invisible(self, element: lxml.html.HtmlElement, tag: str) -> None:
        """Count a script's characters and marks, a ``<noscript>``'s plea."""
        if tag == "script":
            body = element.text or ""
            self.script_chars += len(body)
            self.external_scripts += element.get("src") is not None
            self.framework = self.framework or _framework_script(element, body)
        elif tag == "noscript" and not self.noscript_asks:
            # Its own text only: a noscript holding a whole page is no plea.
            self.noscript_asks = bool(_ASKS_FOR_JS.search((element.text or "")[:500]))


def script_marks(tree: lxml.html.HtmlElement) -> ScriptMarks:
    """The page's :class:`ScriptMarks`, from one walk over its elements (a mount point's text
    is what the walk counted between its start and its end)."""
    count = ScriptMarks()
    hidden = 0
    mounts: list[int] = []
    for event, element in etree.iterwalk(tree, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if event == "start":
            if tag in _INVISIBLE:
                hidden += 1
                count.invisible(element, tag)
            elif not hidden and element.text:
                count.text_chars += len(element.text.strip())
            if _is_mount(element, tag):
                mounts.append(count.text_chars)
            if not count.framework:
                count.framework = any(element.get(a) is not None for a in FRAMEWORK_ATTRIBUTES)
            continue
        if _is_mount(element, tag) and mounts and count.text_chars == mounts.pop():
            count.empty_mount = True
        if tag in _INVISIBLE:
            hidden -= 1
        if not hidden and element.tail:
            count.text_chars += len(element.tail.strip())
    return count


def needs_javascript(marks: ScriptMarks, main_text_chars: int) -> bool:
    """Whether a page with ``main_text_chars`` of main text needs its scripts run."""
    return main_text_chars < THIN_TEXT and marks.script_built


def _framework_script(element: lxml.html.HtmlElement, body: str) -> bool:
    if element.get("id") in ("__NEXT_DATA__", "__NUXT_DATA__"):
        return True
    return bool(_FRAMEWORK_SCRIPT.search(body[:200]))


def _is_mount(element: lxml.html.HtmlElement, tag: str) -> bool:
    return element.get("id") in MOUNT_IDS or tag in MOUNT_TAGS
