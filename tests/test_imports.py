"""The package's import graph has no cycles, counting imports inside functions too (a cycle
hidden behind a function-level import is still a cycle of design)."""

from __future__ import annotations

import ast
import re
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


CRATE = Path(__file__).resolve().parents[1] / "crates" / "ecnlab" / "src"
_PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+)")


def rust_module(path: Path, root: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def rust_graph(root: Path = CRATE) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Module (file) -> the crate's modules its paths name (``crate::a::b``, ``super::x``),
    from every ``use`` and path in the file, tests included."""
    files = {rust_module(p, root): p for p in root.rglob("*.rs")}
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in files}
    for module, path in files.items():
        text = re.sub(r"//[^\n]*", "", path.read_text())
        for anchor, rest in _PATH.findall(text):
            names = rest.strip(":").split("::")
            # `super` of a file module (aqm/red.rs) and of a directory module (aqm/mod.rs) is
            # the module one up: aqm and the crate
            base = {"crate": (), "super": module[:-1], "self": module}[anchor]
            target = base
            for name in names:  # the longest prefix that is a module file
                if target + (name,) in files:
                    target = target + (name,)
                else:
                    break
            if target != module:
                graph[module].add(target)
    return graph


def sibling_cycles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[str]]:
    """Cycles among the modules of each level: every module and edge is lifted to the children
    of the nearest common parent of its ends, and edges between a module and its own parent or
    children (a directory module re-exporting what its files define) are left out."""
    lifted: dict[str, set[str]] = {}
    for a, targets in graph.items():
        for b in targets:
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            if common == len(a) or common == len(b):
                continue  # parent and child
            x, y = "::".join(a[: common + 1]), "::".join(b[: common + 1])
            lifted.setdefault(x, set()).add(y)
            lifted.setdefault(y, set())
    return cycles(lifted)


def test_the_crate_has_no_module_cycles() -> None:
    graph = rust_graph()
    assert len(graph) > 30 and ("config",) in graph[("aqm", "red")]
    assert sibling_cycles(graph) == []


def test_sibling_cycles_of_a_crate_are_found(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod a;\npub mod b;\npub mod c;\n")
    (src / "a" / "mod.rs").write_text("mod x;\nmod y;\npub use self::x::W;\nuse crate::b::B;\n")
    (src / "a" / "x.rs").write_text("use super::y::Z; // crate::c::C in a comment\npub struct W;\n")
    (src / "a" / "y.rs").write_text("use super::x::W;\nuse super::A;\npub struct Z;\n")
    (src / "b.rs").write_text("use crate::a::x::W;\n")
    (src / "c.rs").write_text("use crate::b::B;\n")
    graph = rust_graph(src)
    assert graph[("a", "x")] == {("a", "y")}
    assert graph[("c",)] == {("b",)}
    assert sibling_cycles(graph) == [["a", "b"], ["a::x", "a::y"]]
