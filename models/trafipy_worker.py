"""rs-trafilatura's text of labelled pages, run by a Python that has ``trafipy`` (evaluation
only: ``models.rs_trafilatura`` starts it in its own interpreter; it imports nothing of this
package, as that Python need not have it).

    PYTHON trafipy_worker.py DATA_DIR IDS_FILE

Reads the ids wanted (one a line) and the ``*.jsonl.gz`` files of ``DATA_DIR``; writes one JSON
line per wanted page to stdout: ``{"id", "text", "error"}`` (``error``: why the extractor
failed on it, else null; its text is then empty). The first line is ``{"version": ...}``.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path


def main() -> int:
    import trafipy

    data, ids_file = Path(sys.argv[1]), Path(sys.argv[2])
    wanted = set(ids_file.read_text(encoding="utf-8").split("\n")) - {""}
    out = sys.stdout
    out.write(json.dumps({"version": str(trafipy.__version__)}) + "\n")
    for path in sorted(data.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec.get("id") not in wanted:
                    continue
                text, error = "", None
                try:
                    text = trafipy.extract(rec["html"], url=rec.get("url")).text or ""
                except BaseException as exc:  # a Rust panic arrives as a BaseException
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    error = f"{type(exc).__name__}: {exc}"[:300]
                out.write(json.dumps({"id": rec["id"], "text": text, "error": error}) + "\n")
                out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
