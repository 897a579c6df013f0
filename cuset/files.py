"""Writing a file whole or not at all: a reader (the app, a resumed run, a figure's viewer)
never sees half of it, and a write cut short leaves the old file as it was.

    atomic_write(path, lambda tmp: tmp.write_text(text))
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call write(temporary path) next to `path`, then rename it onto `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
