"""Benchmark tasks for evaluation: the bundled suite written for this project, and KernelBench.

    from cuset.evaluate.suite import load_suite, load_kernelbench, suite_split
    tasks = load_suite(levels=[2, 3], split="held_out")      # bundled.py
    kb = load_kernelbench("path/to/KernelBench", level=1)   # kernelbench.py
    results = verify_task(tasks[0], tmp_dir)                  # verify.py: reference passes, bugs fail

    python -m cuset.evaluate.suite --help
"""

from cuset.evaluate.suite.bundled import BUGS, LEVELS, SPLITS, Task, WrongSolution, load_suite, suite_split
from cuset.evaluate.suite.kernelbench import load_kernelbench
from cuset.evaluate.suite.verify import backend_table, read_rows, table_markdown, verify_suite, verify_task

__all__ = ["BUGS", "LEVELS", "SPLITS", "Task", "WrongSolution", "backend_table", "load_kernelbench", "load_suite", "read_rows",
           "suite_split", "table_markdown", "verify_suite", "verify_task"]
