"""Print the CUDA-sensitive spans of a file: ``python -m cuset.sensitivity FILE [--statements]``.

One line per span: ``line:column  category  text``; then the notes. Reads stdin for ``-``.
"""

from __future__ import annotations

import argparse
import sys

from cuset.sensitivity import tag
from cuset.sensitivity.sources import line_col


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cuset.sensitivity", description=__doc__)
    ap.add_argument("file", help="a .cu/.py/.md sample, or - for stdin")
    ap.add_argument("--statements", action="store_true", help="also list function-body statements")
    args = ap.parse_args(argv)
    if args.file == "-":
        text = sys.stdin.read()
    else:
        with open(args.file, encoding="utf-8", errors="replace") as f:
            text = f.read()
    result = tag(text)
    for span in result.spans:
        line, col = line_col(text, span.start)
        print(f"{line:>5}:{col:<4} {span.category:<15} {span.text[:70]!r}")
    if args.statements:
        for st in result.statements:
            line, col = line_col(text, st.start)
            print(f"{line:>5}:{col:<4} {'  ' * st.depth}{st.kind}")
    for note in result.notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
