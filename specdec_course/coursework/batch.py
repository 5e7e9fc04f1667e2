"""Grading a folder: one CSV row per file, one worker process per submission, resumable.

Every entry directly in the folder gets a row in file-name order (dotfiles too): a notebook its
points, anything else an ``error`` (a link or another non-regular file is never followed or read).
A subfolder gets no row and a named warning. ``jobs`` worker processes (``python -m
specdec_course.coursework.submission``) grade the files one after another, each row with a
deadline: a worker that dies, is killed or runs past it costs that row an error and is replaced,
so the batch always finishes.
Workers run in their own sessions with their output discarded, so nothing a submission does
reaches the progress lines on the terminal. The CSV is rewritten after each row, so an
interrupted run keeps every finished row and a rerun grades only the rest.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path

import nbformat

from .authoring import Assignment
from .function_host import HostError, end_process, read_line
from .sandbox import features, missing_features
from .submission import GradedSubmission, Limits, SubmissionError, read_bytes


def submission_entries(folder: Path, exclude=()) -> tuple[list[Path], list[str]]:
    """Every entry of ``folder`` that gets a row (any name, links and non-files included), and warnings for subfolders."""
    excluded = {Path(path).resolve() for path in exclude}
    files, warnings = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(folder) / entry.name
        if path.parent.resolve() / entry.name in excluded:
            continue
        if entry.is_dir(follow_symlinks=False):
            warnings.append(f"skipped the folder {entry.name}/: only files directly in {folder} are graded")
        else:
            files.append(path)
    return files, warnings


def _header(assignment: Assignment) -> list[str]:
    return ["file", *assignment.points, "total", "seconds", "error", "sha256"]


def _row(graded: GradedSubmission) -> list:
    return [
        graded.file,
        *graded.scores.values(),
        graded.total,
        f"{graded.seconds:.1f}",
        graded.error,
        graded.sha256,
    ]


def _finished_rows(out: Path, assignment: Assignment) -> dict[str, GradedSubmission]:
    """Rows of an earlier run of the same assignment in ``out`` (none if it is missing or has other columns)."""
    try:
        with open(out, newline="") as handle:
            reader = csv.reader(handle)
            if next(reader, None) != _header(assignment):
                return {}
            rows = [dict(zip(_header(assignment), row)) for row in reader]
    except OSError:
        return {}
    return {
        row["file"]: GradedSubmission(
            row["file"],
            {q: int(row[q]) for q in assignment.points},
            float(row["seconds"]),
            [row["error"]] if row["error"] else [],
            row["sha256"],
        )
        for row in rows
    }


def _partial(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _write_rows(out: Path, assignment: Assignment, rows: list[GradedSubmission]) -> None:
    """Replace ``out`` in one step (a crash leaves the old file or the new one, never half of one)."""
    partial = _partial(out)
    with open(partial, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(_header(assignment))
        writer.writerows(_row(graded) for graded in rows)
    os.replace(partial, out)


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except SubmissionError:
        return ""


def worker_deadline(assignment: Assignment, limits: Limits) -> float:
    """Seconds a worker may take: kernel start, cells, export, every case, the function host's start."""
    return limits.time * (len(assignment.cases) + 4) + 120


class _Workers:
    """One worker process per thread, each grading file after file; a worker that fails is ended and replaced."""

    def __init__(self, assignment: Assignment, limits: Limits):
        self.job = json.dumps(
            {
                "assignment": assignment.name,
                "notebook": nbformat.writes(assignment.notebook),
                "limits": asdict(limits),
            }
        )
        self.deadline = worker_deadline(assignment, limits)
        self.points = {question: 0 for question in assignment.points}
        self.mine = threading.local()
        self.running: set[subprocess.Popen] = set()
        self.stopped = False
        self.lock = threading.Lock()

    def _worker(self) -> subprocess.Popen:
        worker = getattr(self.mine, "worker", None)
        if worker is None:
            with self.lock:
                if self.stopped:
                    raise KeyboardInterrupt
                worker = subprocess.Popen(
                    [sys.executable, "-m", "specdec_course.coursework.submission"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # Ctrl-C at the terminal is the batch's to handle
                )
                self.running.add(worker)
            worker.stdin.write(self.job.encode() + b"\n")
            self.mine.worker, self.mine.buffer = worker, bytearray()
        return worker

    def grade(self, path: Path) -> GradedSubmission:
        problem = None
        try:
            worker = self._worker()
            worker.stdin.write(json.dumps(str(path)).encode() + b"\n")
            worker.stdin.flush()
            return GradedSubmission(
                **json.loads(
                    read_line(worker.stdout.fileno(), time.monotonic() + self.deadline, self.mine.buffer)
                )
            )
        except HostError as exc:
            problem = (
                f"grading did not finish within {self.deadline:g} s; the row was ended"
                if "in time" in str(exc)
                else "the grading process ended without a result"
            )
        except (OSError, ValueError, TypeError):
            problem = "the grading process ended without a result"
        if getattr(self.mine, "worker", None) is not None:
            self._end(self.mine.worker)
            self.mine.worker = None
        return GradedSubmission(path.name, dict(self.points), self.deadline, [problem], _sha256(path))

    def _end(self, worker: subprocess.Popen) -> None:
        end_process(worker)  # its sandboxes die with it (PR_SET_PDEATHSIG)
        with self.lock:
            self.running.discard(worker)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            running = list(self.running)
        for worker in running:
            self._end(worker)


def grade_folder(
    assignment: Assignment, folder, out, limits: Limits | None = None, jobs: int | None = None, log=sys.stderr
) -> list[GradedSubmission]:
    """Grade every file in ``folder`` with ``jobs`` worker processes; one CSV row each, in file order.

    ``out`` is rewritten after each submission. Rows already in ``out`` for the same file (same
    SHA-256) and assignment are kept, not regraded, so an interrupted run resumes where it stopped.
    Progress and warnings go to ``log``.
    """
    out, limits = Path(out), limits or Limits()
    files, warnings = submission_entries(Path(folder), exclude=(out, _partial(out)))
    earlier = _finished_rows(out, assignment)
    rows = {path.name: earlier[path.name] for path in files if path.name in earlier}
    rows = {name: row for name, row in rows.items() if row.sha256 == _sha256(Path(folder) / name)}
    todo = [path for path in files if path.name not in rows]
    order = {path.name: i for i, path in enumerate(files)}
    full = sum(assignment.points.values())
    for warning in [*missing_features(features()), *warnings]:
        print(f"warning: {warning}", file=log, flush=True)
    if rows:
        print(f"resuming {out}: {len(rows)} of {len(files)} already graded", file=log, flush=True)

    def in_order():
        return sorted(rows.values(), key=lambda g: order[g.file])

    _write_rows(out, assignment, in_order())
    workers = _Workers(assignment, limits)
    pool = ThreadPoolExecutor(max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1)))
    try:
        for future in as_completed([pool.submit(workers.grade, path) for path in todo]):
            graded = future.result()
            rows[graded.file] = graded
            _write_rows(out, assignment, in_order())
            print(
                f"[{len(rows)}/{len(files)}] {graded.file}: {graded.total}/{full} in {graded.seconds:.1f} s"
                + (f" — {graded.error}" if graded.error else ""),
                file=log,
                flush=True,
            )
    except KeyboardInterrupt:
        workers.stop()
        print(
            f"interrupted: {out} holds the {len(rows)} finished rows; run the same command again to grade "
            f"the other {len(files) - len(rows)}",
            file=log,
            flush=True,
        )
        raise
    finally:
        workers.stop()
        pool.shutdown(wait=True, cancel_futures=True)
    return in_order()
