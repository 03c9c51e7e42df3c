"""docs/design.md layout rules: nothing in the repository may shadow graphql-core's `graphql`."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"

PROBE = """
import importlib.util, json, graphql
spec = importlib.util.find_spec("graphql")
print(json.dumps({
    "file": graphql.__file__,
    "origin": spec.origin,
    "locations": list(spec.submodule_search_locations or []),
    "version": getattr(graphql, "__version__", None),
}))
"""


def _assert_is_graphql_core(file: str | None, version: str | None) -> None:
    assert file is not None, "graphql resolved to a namespace package (a bare folder)"
    path = Path(file).resolve()
    assert "site-packages" in path.parts, path
    assert path.parent.name == "graphql" and path.parent.parent.name == "site-packages", path
    assert not path.is_relative_to(REPO / "graphql"), path
    assert not path.is_relative_to(TESTS), path
    assert version == importlib.metadata.version("graphql-core")


def test_import_graphql_in_this_process_is_graphql_core():
    import graphql

    _assert_is_graphql_core(graphql.__file__, graphql.__version__)


def test_import_graphql_from_the_repository_root_is_graphql_core():
    # `python -c` puts the current directory first on sys.path: the shadowing case that matters.
    for cwd in (REPO, TESTS):
        result = subprocess.run(
            [sys.executable, "-c", PROBE], cwd=cwd, capture_output=True, check=True, timeout=120
        )
        probe = json.loads(result.stdout)
        _assert_is_graphql_core(probe["file"], probe["version"])
        assert probe["origin"] == probe["file"]
        for location in probe["locations"]:
            assert not Path(location).resolve().is_relative_to(REPO / "graphql")


def test_strawberry_imports_from_the_repository_root():
    subprocess.run(
        [sys.executable, "-c", "import strawberry, graphql.language"],
        cwd=REPO,
        capture_output=True,
        check=True,
        timeout=120,
    )


def test_graphql_folder_holds_no_python():
    folder = REPO / "graphql"
    python_files = sorted(str(p.relative_to(REPO)) for p in folder.rglob("*.py"))
    compiled = sorted(str(p.relative_to(REPO)) for p in folder.rglob("*.pyc"))
    assert python_files == []
    assert compiled == []
    assert not (folder / "__init__.py").exists()


def test_no_test_folder_is_named_graphql():
    offenders = sorted(
        str(p.relative_to(REPO)) for p in TESTS.rglob("*") if p.is_dir() and p.name == "graphql"
    )
    assert offenders == []
    assert not (TESTS / "graphql.py").exists()


# The layers of store/ (docs/design.md), mirrored by the tests; cross-cutting checks at the top.
LAYER_FOLDERS = {"model", "db", "api", "console", "cli"}
TOP_LEVEL_TESTS = {"test_layout.py", "test_docs.py", "test_public_api.py", "test_errors.py",
                   "test_corrupted_stores.py", "test_no_password_printed.py",
                   "test_readme_walk.py", "test_bench_help.py",  # the README and bench/ whole
                   "test_damaged_store_answers.py"}


def test_tests_mirror_the_package_layers() -> None:
    assert {p.name for p in (REPO / "store").iterdir() if p.is_dir()} >= LAYER_FOLDERS
    misplaced = [
        str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py")
        if not (path.parent.name in LAYER_FOLDERS and path.parent.parent == TESTS)
        and not (path.parent == TESTS and path.name in TOP_LEVEL_TESTS)
    ]
    assert misplaced == []


# What each layer and room may import (docs/design.md): imports point one way, down.
MAY_IMPORT = {
    "model": {"model", "errors", "bundled"},
    "db.schema": {"model", "errors", "bundled", "db.schema"},
    "db.log": {"model", "errors", "db.schema", "db.log"},
    "db.write": {"model", "errors", "db.schema", "db.log", "db.write", "store"},  # __version__
    "db.verify": {"model", "errors", "db.schema", "db.log", "db.write", "db.verify"},
    "db.queries": {"model", "errors", "db.schema", "db.log", "db.queries"},
}


def _place(module: str) -> str:
    """`store.db.write.writer` -> `db.write`; `store.model.taxonomy` -> `model`."""
    parts = module.split(".")[1:] or ["store"]
    return ".".join(parts[:2]) if parts[0] == "db" and len(parts) > 1 else parts[0]


def test_imports_point_down_the_layers_and_rooms() -> None:
    import ast

    upward = []
    for path in sorted((REPO / "store").rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        allowed = MAY_IMPORT.get(_place(module))
        if allowed is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("store.") and _place(name) not in allowed:
                    upward.append(f"{module} imports {name}")
    assert upward == []


# --- tests take free ports ---------------------------------------------------------------------

SERVING_WORDS = {"serve", "demo"}  # `witness serve` included: its words are "witness", "serve"


def _literal_port(node: ast.expr) -> bool:
    """A port written out: an int or a string of digits, other than 0 (the kernel's pick)."""
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value != 0
    return isinstance(value, str) and value.isdigit() and int(value) != 0


def _fixed_ports(path: Path) -> list[str]:
    """Where `path` serves or binds on a port it did not ask the kernel for: a command line
    (a call's arguments or a list) with `serve` or `demo` and no `--port`, or `--port` a
    literal; a `bind((host, port))` with a literal port."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        words: list[ast.expr] = []
        if isinstance(node, ast.Call):
            words = list(node.args)
            name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if name == "bind" and words and isinstance(words[0], ast.Tuple):
                address = words[0].elts
                if len(address) == 2 and _literal_port(address[1]):
                    found.append((node.lineno, "bind to a literal port"))
        elif isinstance(node, ast.List):
            words = list(node.elts)
        strings = [w.value if isinstance(w, ast.Constant) else None for w in words]
        if not SERVING_WORDS & set(filter(None, strings)):
            continue
        if "--port" not in strings:
            found.append((node.lineno, "serves without --port (8000 may be taken)"))
            continue
        port = words[strings.index("--port") + 1] if strings.index("--port") + 1 < len(words) \
            else None
        if port is not None and _literal_port(port):
            found.append((node.lineno, f"--port {port.value!r}: a fixed port"))  # type: ignore[attr-defined]
    return [f"{path.name}:{line}: {what}" for line, what in sorted(found)]


def test_tests_take_free_ports_never_a_fixed_one() -> None:
    """A developer's demo on 8000 (or any server) must not fail a test: every command line a
    test serves from passes --port with a free port (tests/free_ports.py) or 0."""
    offenders = [where for path in sorted(TESTS.rglob("*.py")) for where in _fixed_ports(path)]
    assert offenders == []


def test_the_free_port_check_finds_a_fixed_port(tmp_path: Path) -> None:
    planted = tmp_path / "test_planted.py"
    planted.write_text('cli("serve", "--db", "x.db")\n'
                       'cli("demo", "--port", "8000")\n'
                       'run(["witness", "serve", "--port", "9000"])\n'
                       'probe.bind(("127.0.0.1", 8000))\n'
                       'cli("serve", "--port", str(port))\n'
                       'cli("demo", "--port", "0")\n', encoding="utf-8")
    assert _fixed_ports(planted) == [
        "test_planted.py:1: serves without --port (8000 may be taken)",
        "test_planted.py:2: --port '8000': a fixed port",
        "test_planted.py:3: --port '9000': a fixed port",
        "test_planted.py:4: bind to a literal port"]
