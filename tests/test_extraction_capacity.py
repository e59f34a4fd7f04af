"""The extraction pool follows the CPU the process may use, and fetching waits when
extraction falls behind (issue 47): a real cgroup file tree, the process's real affinity,
real crawls of loopback sites with the real model."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.cpu import cgroup_quota, usable_cores, usable_cpus

from tests.crawl import NO_WAITS, run_crawl
from tests.many_sites import ManySites


def _cgroup_tree(root: Path, limits: dict[str, str], own: str) -> Path:
    """A cgroup v2 tree under ``root`` (``cpu.max`` per cgroup path) and the process's
    ``/proc/self/cgroup`` naming ``own``."""
    for path, value in limits.items():
        folder = root / path.strip("/")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cpu.max").write_text(value + "\n")
    own_file = root / "self_cgroup"
    own_file.write_text(f"0::{own}\n")
    return own_file


def test_cgroup_v2_quota_is_the_smallest_on_the_way_up(tmp_path: Path) -> None:
    limits = {"": "max 100000", "/crawl": "50000 100000", "/crawl/worker-3": "25000 100000"}
    own = _cgroup_tree(tmp_path, limits, "/crawl/worker-3")
    assert cgroup_quota(tmp_path, own) == 0.25
    assert usable_cpus(tmp_path, own) == 0.25
    assert usable_cores(tmp_path, own) == 1
    # The parent's half core holds for a child without a limit of its own.
    own = _cgroup_tree(tmp_path, {"/crawl/worker-4": "max 100000"}, "/crawl/worker-4")
    assert cgroup_quota(tmp_path, own) == 0.5


def test_cgroup_v2_without_a_quota_leaves_the_affinity(tmp_path: Path) -> None:
    own = _cgroup_tree(tmp_path, {"": "max 100000", "/a": "max 100000"}, "/a")
    assert cgroup_quota(tmp_path, own) is None
    assert usable_cores(tmp_path, own) == len(os.sched_getaffinity(0))


def test_cgroup_v1_quota(tmp_path: Path) -> None:
    folder = tmp_path / "cpu,cpuacct" / "job"
    folder.mkdir(parents=True)
    (folder / "cpu.cfs_quota_us").write_text("150000\n")
    (folder / "cpu.cfs_period_us").write_text("100000\n")
    own = tmp_path / "self_cgroup"
    own.write_text("4:memory:/job\n3:cpu,cpuacct:/job\n0::/\n")
    assert cgroup_quota(tmp_path, own) == 1.5
    assert usable_cores(tmp_path, own) == 1
    (folder / "cpu.cfs_quota_us").write_text("-1\n")  # v1's "no quota"
    assert cgroup_quota(tmp_path, own) is None


def test_unreadable_cgroup_files_mean_no_quota(tmp_path: Path) -> None:
    assert cgroup_quota(tmp_path, tmp_path / "missing") is None
    own = _cgroup_tree(tmp_path, {"/a": "garbage"}, "/a")
    assert cgroup_quota(tmp_path, own) is None


@pytest.fixture
def one_core() -> Iterator[None]:
    """This thread, and the processes it starts, may run on one core only (their real
    affinity), for the test."""
    before = os.sched_getaffinity(0)
    if len(before) < 2:
        pytest.skip("the machine has one core: nothing to tell apart")
    os.sched_setaffinity(0, {min(before)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def test_the_crawl_pool_follows_the_affinity(one_core: None, tmp_path: Path) -> None:
    """A crawl that may use one core of several starts one extraction process, not one per
    core of the host."""
    with ManySites(1, pages=2, crawl_delay=0) as sites:
        domains = sites.write_domains(tmp_path / "sites.txt")
        # A process started now, from this thread: it inherits the affinity (a crawl process
        # started earlier for the tests would not).
        args = {"domains_file": str(domains)}
        result = run_crawl("sitemap", tmp_path, args, dict(NO_WAITS), fresh_process=True)
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == 2
    assert "workers=1 " in result.log, result.log[-3000:]


def test_fetching_waits_for_extraction(tmp_path: Path) -> None:
    """One extraction process and downloads without delays: at most EXTRACT_MAX_PENDING
    pages are held between their request and their export, and every page is exported."""
    settings = {
        **NO_WAITS,
        "EXTRACT_WORKERS": "1",
        "EXTRACT_MAX_PENDING": "3",
        "CONCURRENT_REQUESTS": "16",
        "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    }
    with ManySites(4, pages=20, crawl_delay=0) as sites:
        domains = sites.write_domains(tmp_path / "sites.txt")
        result = run_crawl("sitemap", tmp_path, {"domains_file": str(domains)}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log
    exported = Counter(item["url"] for item in result.items)
    assert len(exported) == sites.expected and max(exported.values()) == 1
    assert result.stats["extract/pending_max"] <= 3
    assert result.stats["extract/backpressure_waits"] > 0


def test_pages_held_for_a_site_memory_warm_up_do_not_stop_fetching(tmp_path: Path) -> None:
    """The site memory holds a site's first pages, extracted, until the site has its
    warm-up's worth: those do not count against EXTRACT_MAX_PENDING (they would wait for
    pages that could never come)."""
    settings = {
        **NO_WAITS,
        "EXTRACT_WORKERS": "1",
        "EXTRACT_MAX_PENDING": "2",
        "SITE_MEMORY_ENABLED": "True",
        "SITE_MEMORY_WARMUP": "5",
    }
    with ManySites(3, pages=8, crawl_delay=0) as sites:
        domains = sites.write_domains(tmp_path / "sites.txt")
        args = {"domains_file": str(domains)}
        result = run_crawl("sitemap", tmp_path, args, settings, timeout=120)
    assert result.returncode == 0, result.log[-3000:]
    assert len({item["url"] for item in result.items}) == sites.expected
    assert result.stats["extract/pending_max"] <= 2
