"""The house rules of cuset's imports: no import circle, and no import from a lower layer to a
higher one (the layer order is DESIGN.md's data flow).

    .venv/bin/python -m pytest tests/test_imports.py -q

Read with the standard library's `ast` only, so nothing is imported and the check takes well
under a second. What counts as an import of module A by module B:

- every `import` and `from ... import` in B, at module level or inside a function, class or
  `try` (a lazy import hides a circle or an upward dependency, it does not remove it);
  the one exception is an `if TYPE_CHECKING:` block, which never runs (annotations only);
- `from cuset.x import y` is an import of cuset.x.y when that is a module, else of cuset.x;
  relative imports are resolved against B's package;
- importing cuset.x.y is not counted as importing cuset.x, although Python runs the package's
  __init__ first: counting it would make every package that re-exports its submodules a circle;
- a module named by a string and imported with importlib (the job kinds of cuset.jobs.kinds)
  is a plug-in looked up by name, not an import.

Every module is placed in a layer by LAYER_OF (its own entry, else its package's): a new
top-level module, or a new package, fails `test_every_module_has_a_layer` until it is placed.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Low -> high. "common" is below every stage: modules that import nothing of cuset's stages.
# jobs sits below train (DESIGN.md lists it beside the flow, not in it): it is the generic store
# and process runner that every stage that starts or reports a job uses (train, generate,
# evaluate, experiment, figures), and it names no stage itself (cuset.jobs.kinds).
LAYERS = (
    "common", "data", "sensitivity", "models", "confidence", "regions", "objective", "jobs", "train",
    "generate", "evaluate", "experiment", "figures", "cli",
)

LAYER_OF = {
    # common: shared by every stage, importing none of them
    "cuset": "common",  # the package's docstring and version
    "cuset.config": "common",  # ConfigFile, the YAML/JSON round trip of every stage's config
    "cuset.workspace": "common",  # the workspace folder and its SQLite store
    "cuset.bf16": "common",  # what this machine's CPU computes fast, and bf16 products as float32 GEMMs
    "cuset.paths": "common",  # where the checkout's folders are (analysis/experiments, analysis/results)
    "cuset.files": "common",  # writing a file atomically
    "cuset.palette": "common",  # the colours and method order of every figure, plotly or matplotlib
    # the stages, in the order data flows
    "cuset.data": "data",
    "cuset.sensitivity": "sensitivity",
    "cuset.models": "models",
    "cuset.confidence": "confidence",
    "cuset.heatmap": "confidence",  # a view of per-token confidence (HTML); imports sensitivity only
    "cuset.regions": "regions",
    "cuset.objective": "objective",
    "cuset.selection": "objective",  # samples ranked by the objective's region score
    "cuset.jobs": "jobs",
    "cuset.train": "train",
    "cuset.generate": "generate",
    "cuset.evaluate": "evaluate",
    "cuset.experiment": "experiment",
    # results, plots, paper figures and the analyses behind them (DESIGN.md: cuset/report, analysis/)
    "cuset.figures": "figures",
    "cuset.report": "figures",
    "cuset.findings": "figures",
    "cuset.diff": "figures",
    "cuset.failures": "figures",
    # entry points: the command line and the app's helpers
    "cuset.cli": "cli",
    "cuset.cli_options": "cli",
    "cuset.analysis_commands": "cli",
    "cuset.overview": "cli",
    "cuset.serve": "cli",
    "cuset.__main__": "cli",
}

# Upward imports that stay for now, each with why and what would remove it. Keep this short.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under root/package (a package is named by its __init__)."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of the tree, at any depth, outside `if TYPE_CHECKING:` blocks."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module `name` names, or the nearest enclosing one (a name imported from a module)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else None


def imported_modules(module: str, path: Path, modules: dict[str, Path], package: str) -> dict[str, int]:
    """The package's modules that `module` imports -> the first line that does."""
    is_package = path.name == "__init__.py"
    out: dict[str, int] = {}
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source for alias in node.names]
        for name in names:
            if name.split(".")[0] != package:
                continue
            target = _known(name, modules)
            if target is not None and target != module:
                out[target] = min(out.get(target, node.lineno), node.lineno)
    return out


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """module -> {imported module -> line}, for every module of root/package."""
    modules = module_files(root, package)
    return {name: imported_modules(name, path, modules, package) for name, path in modules.items()}


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None (an iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, iters = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt) and nxt in graph:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph[nxt])))
    return None


def layer_of(module: str) -> str | None:
    """The module's own layer, else its package's; None when unplaced (the root package's entry
    is its own, not its top-level modules')."""
    name = module
    while name not in LAYER_OF or (name != module and "." not in name):
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return LAYER_OF[name]


def upward_imports(graph: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of a higher layer's module."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [(a, b, line) for a, targets in sorted(graph.items()) for b, line in sorted(targets.items())
            if rank[layer_of(b)] > rank[layer_of(a)]]


@functools.cache
def _cuset_graph() -> dict[str, dict[str, int]]:
    return import_graph(REPO, "cuset")


def _describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return "\n".join(f"  {a} -> {b}  (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:]))


# ------------------------------------------------------------------------------ the checks


def test_cuset_has_no_import_circle():
    graph = _cuset_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import circle:\n" + _describe(cycle, graph)


def test_every_module_has_a_layer():
    unplaced = [m for m in module_files(REPO, "cuset") if layer_of(m) is None]
    assert not unplaced, f"place these modules in a layer (LAYER_OF in {Path(__file__).name}): {', '.join(unplaced)}"
    assert set(LAYER_OF.values()) <= set(LAYERS)


def test_no_module_imports_a_higher_layer():
    found = upward_imports(_cuset_graph())
    new = [f"  {a} [{layer_of(a)}] -> {b} [{layer_of(b)}]  (line {line})" for a, b, line in found if (a, b) not in KNOWN_UPWARD]
    assert not new, "imports from a lower layer to a higher one (order: " + " < ".join(LAYERS) + "):\n" + "\n".join(new)
    gone = set(KNOWN_UPWARD) - {(a, b) for a, b, _ in found}
    assert not gone, f"no longer imported, remove from KNOWN_UPWARD: {sorted(gone)}"


# ------------------------------------------------------------------------------ the checker itself


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_checker_finds_a_circle_through_a_lazy_relative_import(tmp_path):
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def f():\n    from . import a\n    return a\n",
        "pkg/c.py": "from pkg.a import something\n",  # a name from a module: an import of pkg.a, no circle
    })
    graph = import_graph(root, "pkg")
    assert graph["pkg.a"] == {"pkg.b": 1} and graph["pkg.b"] == {"pkg.a": 2} and graph["pkg.c"] == {"pkg.a": 1}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]


def test_the_checker_skips_type_checking_imports_and_accepts_a_tree(tmp_path):
    root = _package(tmp_path, {
        "pkg/__init__.py": "from pkg.sub import leaf\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/leaf.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import top\nimport os\n",
        "pkg/top.py": "from .sub import leaf\nimport pkg.sub.leaf\n",
    })
    graph = import_graph(root, "pkg")
    assert graph == {"pkg": {"pkg.sub.leaf": 1}, "pkg.sub": {}, "pkg.sub.leaf": {}, "pkg.top": {"pkg.sub.leaf": 1}}
    assert find_cycle(graph) is None


def test_the_checker_flags_an_import_of_a_higher_layer():
    graph = {"cuset.data.loaders": {"cuset.train.config": 7, "cuset.bf16": 3}, "cuset.train.config": {"cuset.data": 1}}
    assert upward_imports(graph) == [("cuset.data.loaders", "cuset.train.config", 7)]
    assert layer_of("cuset.train.config") == "train" and layer_of("cuset.no_such_module") is None
