"""Vendors GraphiQL and React into store/api/graphiql_assets/ from the npm registry.

Run from the repository root with node and npm on PATH:

    python3 scripts/vendor_graphiql.py [GRAPHIQL_VERSION [REACT_VERSION]]

It packs the pinned packages with `npm pack`, copies their browser builds byte for byte,
writes each package's licence, the licences of what graphiql.min.js bundles, and the
folder's README (the manifest: file, package, version, licence, sha256). GraphiQL 5 ships
no browser build that works without a bundler, and React 19 no UMD files: stay on
GraphiQL 4 and React 18.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

GRAPHIQL = sys.argv[1] if len(sys.argv) > 1 else "4.1.2"
REACT = sys.argv[2] if len(sys.argv) > 2 else "18.3.1"
ASSETS = Path(__file__).resolve().parents[1] / "store" / "api" / "graphiql_assets"

# (package, version, file in the package's tarball, file served)
FILES = [
    ("react", REACT, "umd/react.production.min.js", "react.production.min.js"),
    ("react-dom", REACT, "umd/react-dom.production.min.js", "react-dom.production.min.js"),
    ("graphiql", GRAPHIQL, "graphiql.min.js", "graphiql.min.js"),
    ("graphiql", GRAPHIQL, "graphiql.min.css", "graphiql.min.css"),
]
# Loaded as separate files (React's own licence covers them) or types only: not in the bundle.
NOT_BUNDLED = {"graphiql", "react", "react-dom", "scheduler", "loose-envify", "js-tokens"}
LICENCE_NAMES = ("license", "license.md", "license.txt", "licence", "license-mit.txt")


def npm(*args: str, cwd: Path) -> str:
    return subprocess.run(["npm", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def licence_text(package_dir: Path) -> str | None:
    for child in sorted(package_dir.iterdir()):
        if child.name.lower() in LICENCE_NAMES:
            return child.read_text(encoding="utf-8").strip()
    return None


def bundled_licences(work: Path) -> str:
    """Every package in graphiql's dependency tree, as npm resolves it, with its licence."""
    npm("init", "-y", cwd=work)
    npm("install", "--ignore-scripts", "--no-audit", "--no-fund", f"graphiql@{GRAPHIQL}",
        f"react@{REACT}", f"react-dom@{REACT}", "graphql@16", cwd=work)
    paths = npm("ls", "--all", "--parseable", "--omit=dev", cwd=work).split()
    seen: dict[str, str] = {}
    for path in map(Path, paths):
        meta = json.loads((path / "package.json").read_text(encoding="utf-8"))
        name, version = meta.get("name", ""), meta.get("version", "")
        if path == work or name in NOT_BUNDLED or name.startswith("@types/"):
            continue
        text = licence_text(path) or f"(no licence file in the package; package.json: " \
                                      f"{meta.get('license')})"
        seen[f"{name}@{version}"] = f"{name} {version} ({meta.get('license')})\n\n{text}\n"
    header = (f"graphiql.min.js of graphiql {GRAPHIQL} bundles its npm dependencies. Below,\n"
              "every package of its dependency tree as `npm install` resolved it when this\n"
              "file was written, with its licence: the bundle holds the parts of them its\n"
              "build kept.\n")
    rule = "\n" + "=" * 78 + "\n\n"
    return header + rule + rule.join(seen[key] for key in sorted(seen))


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        rows = []
        for package in sorted({(p, v) for p, v, _, _ in FILES}):
            tarball = npm("pack", f"{package[0]}@{package[1]}", cwd=work).split()[-1]
            with tarfile.open(work / tarball) as archive:
                archive.extractall(work / package[0], filter="data")
            shutil.copyfile(work / package[0] / "package" / "LICENSE",
                            ASSETS / "licenses" / f"{package[0]}.LICENSE")
        for package, version, inside, served in FILES:
            shutil.copyfile(work / package / "package" / inside, ASSETS / served)
            digest = hashlib.sha256((ASSETS / served).read_bytes()).hexdigest()
            rows.append(f"| `{served}` | {package} | {version} | `{inside}` | MIT, "
                        f"`licenses/{package}.LICENSE` | `{digest}` |")
        tree = work / "tree"
        tree.mkdir()
        (ASSETS / "licenses" / "graphiql-bundled.LICENSES").write_text(
            bundled_licences(tree), encoding="utf-8")
    template = (ASSETS / "README.md").read_text(encoding="utf-8")
    head, _, rest = template.partition("<!-- manifest -->")
    _, _, tail = rest.partition("<!-- /manifest -->")
    table = "\n".join(["| file | npm package | version | file in the package | licence | "
                       "sha256 |", "|---|---|---|---|---|---|", *rows])
    (ASSETS / "README.md").write_text(f"{head}<!-- manifest -->\n{table}\n<!-- /manifest -->"
                                      f"{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
