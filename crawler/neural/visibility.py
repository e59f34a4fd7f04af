"""What a reader does not see: pop-ups, elements hidden by markup, and hidden wrappers that a
script reveals when the page loads."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree
from scrapy_maintext.neural.tags import DROP_TAGS, tag_of

HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)

#: ARIA roles of pop-ups (cookie banners, newsletter and privacy modals): like <dialog>, never
#: main content. On wcxb-dev training sites 1-9% of the text in such elements is ground truth;
#: dropping them raised held-out wcxb-dev macro F1 by 0.6 points (collection pages +3.9).
DIALOG_ROLES = frozenset({"dialog", "alertdialog"})


def is_popup(el: Any) -> bool:
    """An ARIA pop-up: a dialog role or ``aria-modal``."""
    role, modal = el.get("role"), el.get("aria-modal")
    if role is not None and role.strip().lower() in DIALOG_ROLES:
        return True
    return modal is not None and modal.strip().lower() == "true"


#: Elements that may be hidden by markup (``is_hidden`` decides).
HIDDEN_CANDIDATES = etree.XPath("descendant-or-self::*[@hidden or @style]")


def is_hidden(el: Any) -> bool:
    """Hidden by markup: the ``hidden`` attribute or an inline ``display:none`` or
    ``visibility:hidden`` style."""
    if el.get("hidden") is not None:
        return True
    style = el.get("style")
    return bool(style and HIDDEN_STYLE.search(style))


def reveal_wrappers(root: Any, visible_chars: int, share: float, limit: int) -> frozenset[Any]:
    """Hidden elements (among the first ``limit`` that may be) with more than ``share`` of
    the text (theirs + the visible)."""
    # n / (n + visible) > share  <=>  n > visible * share / (1 - share)
    floor = visible_chars * share / (1.0 - share)
    found: list[Any] = []
    # An element inside a hidden one that was weighed has less text than it: not weighed again.
    weighed: set[Any] = set()
    for el in HIDDEN_CANDIDATES(root)[:limit]:
        if not is_hidden(el) or any(a in weighed for a in el.iterancestors()):
            continue
        weighed.add(el)
        # string-length counts script text too: an upper bound, cheap, in C.
        if el.xpath("string-length(string())") > floor and text_chars(el) > floor:
            found.append(el)
    return frozenset(found)


def text_chars(el: Any) -> int:
    """Characters of text in ``el`` that the walk would read if ``el`` were visible: none
    from dropped elements, pop-ups or hidden elements inside it."""
    chars = 0
    walker = etree.iterwalk(el, events=("start", "end"))
    for event, node in walker:
        tag = tag_of(node)
        if event == "end":
            chars += len((node.tail or "").strip()) if node is not el else 0
        elif (
            tag is None
            or tag in DROP_TAGS
            or is_popup(node)
            or (node is not el and is_hidden(node))
        ):
            walker.skip_subtree()
        else:
            chars += len((node.text or "").strip())
    return chars
