"""The bundled project opens no socket that runs code sent to it: neither Scrapy's telnet
console nor its remote-control server (on by default since Scrapy 2.19, which also writes a
job file where the crawl runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.crawl import QUICK_DISCOVERY
from tests.sites import SiteOptions, TestSiteServer


def test_a_crawl_starts_no_remote_control_or_telnet_console(tmp_path: Path) -> None:
    with TestSiteServer(SiteOptions(articles=1, crawl_delay=None, feeds=False)) as server:
        command = [sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap", "-L", "INFO"]
        command += ["-a", f"domain={server.base_url}", "-O", "items.jsonl"]
        for key, value in QUICK_DISCOVERY.items():
            command += ["-s", f"{key}={value}"]
        proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    enabled = proc.stderr[proc.stderr.index("Enabled extensions:") :]
    enabled = enabled[: enabled.index("]")]
    assert "CoreStats" in enabled  # the list read is the extensions'
    assert "RemoteControl" not in enabled and "TelnetConsole" not in enabled, enabled
    assert [p.name for p in tmp_path.iterdir()] == ["items.jsonl"]
