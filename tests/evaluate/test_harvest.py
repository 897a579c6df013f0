"""Builds a candidate made are moved into the shared cache (cuset.evaluate.check._harvest), also
when two checks of one process harvest the same build at once."""

from __future__ import annotations

import threading

from cuset.evaluate.check import _harvest


def test_two_threads_harvesting_one_build_both_succeed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    news = []
    for k in range(8):
        entry = tmp_path / f"new{k}" / "cache" / "ext_abc123"
        entry.mkdir(parents=True)
        (entry / "ext.so").write_bytes(b"\x7fELF" + bytes([k]) * 64)
        news.append(entry.parent)
    start = threading.Barrier(len(news))
    errors: list[BaseException] = []

    def harvest(new):
        start.wait()
        try:
            _harvest(new, shared)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=harvest, args=(n,)) for n in news]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [p.name for p in shared.iterdir()] == ["ext_abc123"]  # one entry, no temp folder left behind
    assert (shared / "ext_abc123" / "ext.so").read_bytes()[:4] == b"\x7fELF"
