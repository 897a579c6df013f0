"""Builds a candidate made are moved into the shared cache (cuset.evaluate.check._harvest), also
when two checks of one process harvest the same build at once."""

from __future__ import annotations

import shutil
import threading

from cuset.evaluate import check


def _build(tmp_path, k):
    entry = tmp_path / f"new{k}" / "cache" / "ext_abc123"
    entry.mkdir(parents=True)
    (entry / "ext.so").write_bytes(b"\x7fELF" + bytes([k]) * 64)
    return entry.parent


def test_two_threads_harvesting_one_build_both_succeed(tmp_path, monkeypatch):
    """Both threads are inside the copy at the same time (a barrier after each copy), so both
    saw no entry yet and both need a temp folder: with a name from the pid alone the second
    copy raised FileExistsError."""
    shared = tmp_path / "shared"
    shared.mkdir()
    news = [_build(tmp_path, k) for k in range(2)]
    inside = threading.Barrier(2, timeout=5)
    real_copytree = shutil.copytree

    def copytree_then_wait(src, dst, **kw):
        out = real_copytree(src, dst, **kw)
        try:
            inside.wait()
        except threading.BrokenBarrierError:
            pass
        return out

    monkeypatch.setattr(check.shutil, "copytree", copytree_then_wait)
    errors: list[BaseException] = []

    def harvest(new):
        try:
            check._harvest(new, shared)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=harvest, args=(n,)) for n in news]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not inside.broken  # both copies really overlapped
    assert [p.name for p in shared.iterdir()] == ["ext_abc123"]  # one entry, no temp folder left behind
    assert (shared / "ext_abc123" / "ext.so").read_bytes() in {b"\x7fELF" + bytes([k]) * 64 for k in range(2)}


def test_harvest_keeps_an_entry_already_stored(tmp_path):
    shared = tmp_path / "shared"
    (shared / "ext_abc123").mkdir(parents=True)
    (shared / "ext_abc123" / "ext.so").write_bytes(b"old")
    check._harvest(_build(tmp_path, 0), shared)
    assert (shared / "ext_abc123" / "ext.so").read_bytes() == b"old"
    assert [p.name for p in shared.iterdir()] == ["ext_abc123"]
