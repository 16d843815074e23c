"""The package's import graph has no cycles, counting imports inside functions too (a cycle
hidden behind a function-level import is still a cycle of design)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "ecnlab"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from .x import y`` names module
    ``x`` or, when ``y`` is a module of package ``x``, ``x.y``)."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    # compiled modules (ecnlab._core) are known by their stubs; they import nothing of ours
    compiled = {module_name(p, root) for p in root.rglob("*.pyi")}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    targets.append(sub if sub in paths or sub in compiled else target)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ecnlab"):
                targets.append(node.module or "")
            elif isinstance(node, ast.Import):
                targets += [a.name for a in node.names if a.name.startswith("ecnlab")]
            graph[name] |= {t for t in targets if t in paths and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 20 and graph["ecnlab.calibration"] >= {"ecnlab._run", "ecnlab._load"}
    assert cycles(graph) == []


def test_a_cycle_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "ecnlab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from .sub import c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from ..a import f\n")
    (pkg / "d.py").write_text("from . import a\n")
    graph = import_graph(pkg)
    assert graph["ecnlab.b"] == {"ecnlab.sub.c"}
    assert cycles(graph) == [["ecnlab.a", "ecnlab.b", "ecnlab.sub.c"]]
