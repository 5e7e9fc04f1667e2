"""The chapters in a real JupyterLab, driven by Chromium through Playwright.

Starts JupyterLab itself (127.0.0.1, a free port, a random token) on a temporary copy of the
chapters that carry an explorer and of the student handouts, and for each chapter: runs all cells,
checks that no cell shows an error, that every explorer control shows its label (a drop-down is named
by it) and the result sits in a live region, moves every explorer control with the keyboard and checks that
the result shown is what ``specdec_lib`` computes for the new inputs. A handout runs up to its first
unanswered question and ``grader.check("q1")`` shows its feedback. The server is stopped by its own
process id whatever happens. Screenshots of the explorers go to ``_build/screenshots/jupyterlab/``.

Skipped with the reason where Chromium or Playwright is absent; a failure under
``SPECDEC_REQUIRE_BROWSER=1`` (CI).
"""

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import chromium_unavailable, launched_chromium, opener, skip_or_fail

from specdec_course import explorers

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots" / "jupyterlab"
CALL = re.compile(r"\b(pq_editor|alpha_gamma_explorer|timing_budget_explorer)\(\)")
EXPLORER_CHAPTERS = {
    path.stem: CALL.search(path.read_text()).group(1)
    for path in sorted((ROOT / "book").glob("*.ipynb"))
    if CALL.search(path.read_text())
}
RUN_TIMEOUT_MS = 180_000


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """(base URL, token) of a JupyterLab serving a scratch folder with the chapters and handouts."""
    skip_or_fail("JupyterLab browser tests", chromium_unavailable())
    from specdec_course.coursework.student import write_student_edition

    work = tmp_path_factory.mktemp("lab")
    for stem in EXPLORER_CHAPTERS:
        shutil.copy(ROOT / "book" / f"{stem}.ipynb", work)
    write_student_edition(work / "handout")
    home = tmp_path_factory.mktemp("jupyter-home")  # settings, workspaces, runtime files: nothing in ~
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    notifications = (
        home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    )
    notifications.parent.mkdir(parents=True)
    notifications.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work}",
        "--LabApp.expose_app_in_browser=True",
        "--ContentsManager.checkpoints_kwargs={}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = open(home / "server.log", "w")  # noqa: SIM115  (closed when the server stops)
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(base, token, server, home / "server.log")
        yield base, token
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started, nothing else
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def _wait_for_server(base, token, server, log, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def browser(lab):
    yield from launched_chromium()


class Notebook:
    """One notebook open in JupyterLab, in its own browser context."""

    def __init__(self, browser, lab, path):
        base, token = lab
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.goto(f"{base}/lab/tree/{path}?token={token}&reset", wait_until="load")
        self.page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.sessionContext",
            timeout=60_000,
        )
        self.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")

    def run(self, command):
        """Execute a JupyterLab command and wait for the kernel to finish."""
        self.page.evaluate(f"() => window.jupyterapp.commands.execute('{command}')")
        self.page.wait_for_function(
            """() => {
            const nb = window.jupyterapp.shell.currentWidget;
            const busy = [...document.querySelectorAll('.jp-InputPrompt')].some(e => e.textContent.includes('*'));
            return nb.sessionContext.session.kernel.status === 'idle' && !busy; }""",
            timeout=RUN_TIMEOUT_MS,
        )

    def errors(self):
        return self.page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
            ' pre:has-text("Traceback"), .jp-RenderedText[data-mime-type='
            '"application/vnd.jupyter.error"]'
        ).all_inner_texts()

    def close(self):
        self.context.close()


@pytest.fixture
def notebook(browser, lab):
    yield from opener(lambda path: Notebook(browser, lab, path))


def _press(control, kind, step):
    """Move one ipywidgets control one option with the keyboard alone.

    A slider takes the arrow keys on its focused handle. A drop-down inside a notebook cell does not:
    JupyterLab reads a plain arrow key as "go to the next cell", so a keyboard user opens the list
    with Alt+Down, moves with the arrows and confirms with Enter, as done here.
    """
    if kind == "range":
        handle = control.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight" if step > 0 else "ArrowLeft")
    else:
        select = control.locator("select")
        select.focus()
        select.press("Alt+ArrowDown")
        select.page.keyboard.press("ArrowDown" if step > 0 else "ArrowUp")
        select.page.keyboard.press("Enter")


def _shown(widget, fields):
    return {name: widget.locator(f'[data-field="{name}"]').first.text_content() for name in fields}


def _wait_until_shown(widget, expected, timeout=10.0):
    """The kernel answers a move asynchronously: poll until the widget shows ``expected``."""
    deadline = time.monotonic() + timeout
    while (shown := _shown(widget, expected)) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shown == expected


@pytest.mark.parametrize("chapter", sorted(EXPLORER_CHAPTERS))
def test_chapter_runs_in_jupyterlab_and_its_explorer_follows_the_keyboard(notebook, chapter):
    explorer = getattr(explorers, EXPLORER_CHAPTERS[chapter])()
    nb = notebook(f"{chapter}.ipynb")
    nb.run("notebook:run-all-cells")
    assert nb.errors() == []
    widget = nb.page.locator(".widget-vbox").filter(has=nb.page.locator(".widget-html")).last
    widget.scroll_into_view_if_needed()
    controls = widget.locator(":scope > .widget-slider, :scope > .widget-dropdown")
    assert controls.count() == len(explorer.controls)
    for i, control in enumerate(
        explorer.controls
    ):  # each control shows its label; a drop-down is named by it
        snapshot = controls.nth(i).aria_snapshot()
        if control.kind == "select":
            assert f'combobox "{control.label}"' in snapshot, f"{control.label!r} is not named by its label"
        else:  # ipywidgets 8 draws a slider as a noUiSlider handle that its label does not name (upstream)
            assert control.label in snapshot and "slider" in snapshot
    assert (
        widget.locator('.widget-html [role="status"][aria-live="polite"]').count() == 1
    )  # the result is announced
    indices = [c.initial for c in explorer.controls]
    fields = sorted(explorer.state_at(indices)["v"])
    assert _shown(widget, fields) == explorer.state_at(indices)["v"]
    moved = 0
    for i, control in enumerate(explorer.controls):
        step = 1 if indices[i] + 1 < len(control.options) else -1
        candidate = indices[:i] + [indices[i] + step] + indices[i + 1 :]
        if explorer.state_at(candidate) is None:
            continue  # a combination the explorer refuses (e.g. q(A) + q(B) > 1)
        _press(controls.nth(i), control.kind, step)
        indices = candidate
        expected = explorer.state_at(indices)["v"]
        _wait_until_shown(widget, expected)
        moved += 1
    assert moved >= len(explorer.controls) - 1, "the keyboard moved too few controls"
    SHOTS.mkdir(parents=True, exist_ok=True)
    widget.screenshot(path=SHOTS / f"{chapter}.png")


HANDOUTS = sorted(p.stem for p in (ROOT / "coursework").glob("*.ipynb"))


def _activate(nb, source_test):
    """Make the first cell whose source passes the JS test ``source_test`` active; return its index."""
    return nb.page.evaluate(f"""() => {{
        const notebook = window.jupyterapp.shell.currentWidget.content;
        const index = notebook.widgets.findIndex(cell => ({source_test})(cell.model.sharedModel.getSource()));
        if (index >= 0) notebook.activeCellIndex = index;
        return index; }}""")


@pytest.mark.parametrize("name", HANDOUTS)
def test_handout_runs_to_its_first_question_and_the_self_check_answers(notebook, name):
    nb = notebook(f"handout/{name}.ipynb")
    first_answer = _activate(nb, "s => s.includes('YOUR CODE HERE')")
    assert first_answer > 0, f"no unanswered question in the {name} handout"
    nb.run("notebook:run-all-above")  # everything a student runs before answering
    assert nb.errors() == []
    check = _activate(nb, """s => s === 'grader.check("q1")'""")
    assert check > first_answer, f'no grader.check("q1") after the first question of {name}'
    nb.run("notebook:run-cell")
    output = nb.page.locator(".jp-Notebook .jp-Cell").nth(check).locator(".jp-OutputArea-output")
    feedback = output.inner_text()
    assert feedback.startswith("q1: ") and "failed" in feedback, feedback  # unanswered, so it must fail
