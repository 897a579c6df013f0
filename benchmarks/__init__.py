"""Benchmarks: `python -m benchmarks.NAME` (full size) or `--small` (what CI runs).

Each measures side by side in one run, prints readable lines and ends with one JSON line."""
