"""What every extracting process builds at its start, kept on disk for the next one.

A process that extracts with metadata and language compiles dateparser's locale regexes
(htmldate's date parser: the ``regex`` module parses each pattern in Python) and
decompresses the language model: seconds of each datatrove task's start, a fresh process
every time (``benchmarks.datatrove_throughput --part breakdown``); the crawl's fork server
pays it once. Here the compiled patterns (``regex`` pickles a
pattern as its compiled code, which loads without parsing) and the decompressed model are
kept in a cache folder: :envvar:`MAINTEXT_CACHE_DIR`, else ``$XDG_CACHE_HOME/scrapy-maintext``,
else ``~/.cache/scrapy-maintext``; ``MAINTEXT_CACHE_DIR=""`` keeps nothing.

The answers do not change: a pattern is looked up by its exact text, flags and ``regex``'s
version, the model file by its size and time. A cache that cannot be read or written is
left aside (the start is then as slow as without it), never an error.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

logger = logging.getLogger(__name__)

#: The environment variable naming the cache folder ("" for none).
CACHE_ENV = "MAINTEXT_CACHE_DIR"
#: What an unpickled file may call: ``regex``'s compile from code, its flags' type.
_REGEX_COMPILE = {
    ("regex._regex", "compile"),
    ("_regex", "compile"),
    ("regex._regex_core", "RegexFlag"),
}


def cache_dir() -> Path | None:
    """The cache folder, or None when :envvar:`MAINTEXT_CACHE_DIR` is empty."""
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return Path(named).expanduser() if named.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "scrapy-maintext"


def write_atomically(name: str, write: Callable[[IO[bytes]], object]) -> None:
    """The cache file ``name`` as ``write`` writes it, replaced in one step (processes that
    start together may write it at once); a folder that cannot be written is left alone."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{name}.", delete=False) as f:
            try:
                write(f)
            except BaseException:
                os.unlink(f.name)
                raise
        os.replace(f.name, folder / name)
    except OSError as exc:
        logger.debug("Start-up cache %s not written: %r", name, exc)


def cached(name: str) -> Path | None:
    """The cache file ``name`` when there is one."""
    folder = cache_dir()
    path = folder / name if folder is not None else None
    return path if path is not None and path.is_file() else None


# -- Compiled ``regex`` patterns ---------------------------------------------------------------


class _CompiledOnly(pickle.Unpickler):
    """Unpickles compiled ``regex`` patterns and builtin values, nothing that runs code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _REGEX_COMPILE:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"not a compiled pattern: {module}.{name}")


def _patterns_name(name: str) -> str:
    import regex

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"{name}-regex-{regex.__version__}-py{version}.pickle"


def _load_patterns(file_name: str) -> dict[tuple[Any, ...], Any]:
    path = cached(file_name)
    if path is None:
        return {}
    try:
        with open(path, "rb") as f:
            patterns = _CompiledOnly(f).load()
    # A damaged or foreign file costs the time it would have saved, nothing else.
    except Exception as exc:
        logger.debug("Start-up cache %s not read: %r", path, exc)
        return {}
    return patterns if isinstance(patterns, dict) else {}


@contextlib.contextmanager
def compiled_patterns(name: str) -> Iterator[None]:
    """Within the block, ``regex`` patterns compiled before (in the cache file for ``name``)
    are taken from there; the others are compiled and added to it.

    ``regex`` offers no hook: its compile function is replaced for the block (the process's
    start, one thread).
    """
    try:
        import regex
        from regex import _main
    except ImportError:
        yield
        return
    compile_ = getattr(_main, "_compile", None)
    if compile_ is None:  # pragma: no cover - a regex that no longer has it
        yield
        return
    file_name = _patterns_name(name)
    patterns = _load_patterns(file_name)
    known = len(patterns)

    def cached_compile(
        pattern: Any, flags: int, ignore_unused: Any, kwargs: Any, cache_it: Any
    ) -> Any:
        # Named lists and locale-dependent patterns are compiled every time.
        if kwargs or flags & regex.LOCALE:
            return compile_(pattern, flags, ignore_unused, kwargs, cache_it)
        key = (type(pattern).__name__, pattern, int(flags), int(regex.DEFAULT_VERSION))
        found = patterns.get(key)
        if found is None:
            found = patterns[key] = compile_(pattern, flags, ignore_unused, kwargs, cache_it)
        return found

    _main._compile = cached_compile
    try:
        yield
    finally:
        _main._compile = compile_
    if len(patterns) > known:
        write_atomically(file_name, lambda f: pickle.dump(patterns, f, protocol=4))


# -- Decompressed files ------------------------------------------------------------------------


def decompressed(source: Path, kind: str, read: Callable[[Path], bytes]) -> IO[bytes]:
    """``source``'s content as ``read`` gives it (decompressing it), from the cache when it
    holds that file's (by its size and time), else read and cached."""
    stat = source.stat()
    name = f"{kind}-{stat.st_size}-{stat.st_mtime_ns}"
    path = cached(name)
    if path is not None:
        try:
            return open(path, "rb")
        except OSError as exc:
            logger.debug("Start-up cache %s not read: %r", path, exc)
    data = read(source)
    write_atomically(name, lambda f: f.write(data))
    return io.BytesIO(data)
