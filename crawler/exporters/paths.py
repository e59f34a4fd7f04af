"""Output paths checked before a crawl starts: one line that names the path, not a failure
at the first document (issue 29).

A local feed (``-O``/``-o`` paths and ``file://`` URIs) and ``DOCDIR_PATH`` must be
writable where they are: a feed is not a folder, and the nearest folder that exists above
it is a writable folder (what is missing below it is created). Feeds with URI parameters
(``%(time)s``) are checked up to the first parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from scrapy.extensions.feedexport import FileFeedStorage, StdoutFeedStorage
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object
from scrapy_maintext.vocabulary.settings import setting
from scrapy_maintext.writable import path_problem

#: Local feed URIs: a plain path or ``file://``.
_LOCAL_SCHEMES = ("", "file")


@dataclass(frozen=True)
class LocalTarget:
    """Where a local feed writes: its file, or the folder of a file named by parameters."""

    path: Path
    folder: bool


def feed_target(uri: str) -> LocalTarget | None:
    """Where feed ``uri`` writes (up to its first URI parameter), None if not local."""
    parsed = urlparse(uri)
    if parsed.scheme not in _LOCAL_SCHEMES:
        return None
    text = unquote(parsed.path) if parsed.scheme == "file" else uri
    cut = text.find("%(")
    if cut >= 0:
        return LocalTarget(Path(text[:cut].rpartition("/")[0] or "."), folder=True)
    return LocalTarget(Path(text), folder=False)


#: Feed schemes whose every item reaches the OS when it is written (the others, such as S3,
#: GCS or FTP, upload a temporary file when the crawl ends).
_WRITTEN_THROUGH = (*_LOCAL_SCHEMES, "stdout")


def held_back_problem(settings: BaseSettings) -> str | None:
    """A feed that holds documents back (a compressing postprocessing step, a storage that
    uploads at the end) in a crawl that remembers what it exported (``CRAWL_STATE``,
    ``JOBDIR``): a document would count as exported before it is anywhere, one line."""
    if not (setting(settings, "CRAWL_STATE") or settings.get("JOBDIR")):
        return None
    for uri, options in settings.getdict("FEEDS").items():
        why = None
        if (options or {}).get("postprocessing"):
            why = "is post-processed (compressed) in memory"
        elif not _writes_through(settings, urlparse(str(uri)).scheme):
            why = "is uploaded only when the crawl ends"
        if why:
            return (
                f"output {uri} {why}: with CRAWL_STATE or JOBDIR a document counts as "
                "exported once written, so use a plain local file (compress or upload it "
                "after the crawl)"
            )
    return None


def _writes_through(settings: BaseSettings, scheme: str) -> bool:
    """Whether the feed storage of ``scheme`` writes each item to the OS at once: a local
    file, standard output, or a storage of the project's own built on them."""
    if scheme in _WRITTEN_THROUGH:
        return True
    path = settings.getdict("FEED_STORAGES").get(scheme)
    try:
        storage = load_object(path) if path else None
    except (ImportError, NameError, ValueError, AttributeError):
        return False
    return isinstance(storage, type) and issubclass(storage, (FileFeedStorage, StdoutFeedStorage))


def outputs_problem(settings: BaseSettings) -> str | None:
    """The first output (feeds, ``DOCDIR_PATH``) that cannot be written, or that would hold
    documents back in a crawl that remembers its exports, in one line."""
    held = held_back_problem(settings)
    if held:
        return held
    for uri in settings.getdict("FEEDS"):
        target = feed_target(str(uri))
        if target is None:
            continue
        problem = path_problem(target.path, "output", target.folder)
        if problem:
            return problem
    docdir = setting(settings, "DOCDIR_PATH")
    if docdir:
        return path_problem(Path(docdir), "DOCDIR_PATH", folder=True)
    return None
