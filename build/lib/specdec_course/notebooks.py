"""Regenerate the committed outputs of the course notebooks, deterministically.

``python -m specdec_course.notebooks [NOTEBOOK ...]`` (``make notebooks``) executes each
notebook in its own folder with a fresh kernel and writes it back in place with no
timing metadata and no saved widget state, so re-running on unchanged code gives an
unchanged file and nbval can compare every output. Without arguments it regenerates
every notebook under ``book/`` and ``coursework/``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIRS = ("book", "coursework")


def course_notebooks() -> list[Path]:
    """Every committed notebook of the course, in a stable order."""
    found = []
    for folder in NOTEBOOK_DIRS:
        found += [p for p in (ROOT / folder).rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    return sorted(found)


def regenerate(path: Path, timeout: int = 600) -> float:
    """Execute one notebook in place; return the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata.get("language_info", {}).pop("version", None)  # differs between patch releases
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    os.environ.setdefault("PYTHONHASHSEED", "0")
    paths = [Path(a).resolve() for a in argv] or course_notebooks()
    for i, path in enumerate(paths, 1):
        print(f"[{i}/{len(paths)}] {path.relative_to(ROOT)} ...", end=" ", flush=True)
        print(f"{regenerate(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
