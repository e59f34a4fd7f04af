"""rs-trafilatura (Rust, through its Python binding ``trafipy``) as a system of the judge
(``models.sources``): evaluation only, never a dependency of the package.

trafipy's wheels need Python 3.12; this package runs on 3.11. So its texts come from a
subprocess of a Python that has it (``--rs-python`` or ``$MAINTEXT_TRAFIPY_PYTHON``),
running ``models/trafipy_worker.py``, and are cached per page in a JSON file (the binding's
version in it: another version computes them again). Without that Python, the system is
skipped with one logged line and the tables go on without its column.

    /root/.pyenv/versions/3.12.1/bin/python -m venv /work/venv-trafipy
    /work/venv-trafipy/bin/pip install trafipy
    export MAINTEXT_TRAFIPY_PYTHON=/work/venv-trafipy/bin/python

rs-trafilatura comes from WCXB's author and its per-type profiles were most likely tuned on
WCXB's dev pages, whose gold was drafted from its output: on wcxb-dev it is scored in-sample
(a ceiling); the other sources are fair.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

NAME = "rs-trafilatura"
PYTHON_ENV = "MAINTEXT_TRAFIPY_PYTHON"
WORKER = Path(__file__).with_name("trafipy_worker.py")
#: Seconds the worker may take per page asked for (it takes milliseconds; a hung page must
#: not hang the judge).
SECONDS_PER_PAGE = 5.0


def python_of(option: str) -> str:
    """The interpreter to run trafipy with: the option, else the environment, else ""."""
    return option or os.environ.get(PYTHON_ENV, "")


def rs_texts(data: str, ids: set[str], python: str, cache: Path) -> dict[str, str] | None:
    """rs-trafilatura's text of each page of ``ids`` (a page it fails on: ""), from
    ``cache`` and, for the pages it lacks, the worker; None (logged) when ``python`` is not
    given or cannot run trafipy."""
    if not python:
        logger.warning("%s skipped: no Python with trafipy (--rs-python or $%s)", NAME, PYTHON_ENV)
        return None
    if not Path(python).is_file():
        logger.warning("%s skipped: %s is not a file", NAME, python)
        return None
    known = _read_cache(cache)
    missing = sorted(ids - set(known.get("texts", {})))
    if missing:
        found = _run_worker(data, missing, python)
        if found is None:
            return None
        version, texts, errors = found
        if known.get("version") not in (None, version):
            known = {}
        known["version"] = version
        known.setdefault("texts", {}).update(texts)
        known.setdefault("errors", {}).update(errors)
        _write_cache(cache, known)
    texts = known["texts"]
    failed = sum(1 for i in ids if i in known.get("errors", {}))
    logger.info("%s: %d pages (%d failed: empty text), version %s", NAME, len(ids), failed,
                known.get("version"))  # fmt: skip
    return {i: texts.get(i, "") for i in ids}


def _run_worker(
    data: str, ids: list[str], python: str
) -> tuple[str, dict[str, str], dict[str, str]] | None:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as fh:
        fh.write("\n".join(ids))
    try:
        done = subprocess.run(
            [python, str(WORKER), data, fh.name],
            capture_output=True,
            text=True,
            timeout=60 + SECONDS_PER_PAGE * len(ids),
            check=False,
        )
    except subprocess.TimeoutExpired:
        logger.warning(
            "%s skipped: its worker ran past %d s", NAME, 60 + SECONDS_PER_PAGE * len(ids)
        )
        return None
    finally:
        os.unlink(fh.name)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if not lines or "version" not in lines[0]:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        logger.warning("%s skipped: %s could not run it (%s)", NAME, python, tail[0])
        return None
    texts = {r["id"]: r["text"] for r in lines[1:]}
    errors = {r["id"]: r["error"] for r in lines[1:] if r["error"]}
    if done.returncode:
        # A crash (not an exception) ends the worker: the pages after it stay missing and
        # count as empty texts, so the tables show the failure.
        logger.warning("%s worker exited with %d after %d of %d pages", NAME, done.returncode,
                       len(texts), len(ids))  # fmt: skip
        errors.update({i: f"worker exited with {done.returncode}" for i in ids if i not in texts})
        texts.update({i: "" for i in ids if i not in texts})
    return str(lines[0]["version"]), texts, errors


def _read_cache(cache: Path) -> dict[str, Any]:
    if not cache.exists():
        return {}
    return dict(json.loads(cache.read_text(encoding="utf-8")))


def _write_cache(cache: Path, known: dict[str, Any]) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    part = cache.with_suffix(".part")
    part.write_text(json.dumps(known), encoding="utf-8")
    part.replace(cache)
