"""Submitted functions run in a sandboxed process of their own; the tests call them from the grader.

The grader never compiles a submitted function. It starts ``python -m
specdec_course.coursework.function_host`` in the sandbox and sends it, over a pipe it owns, the
exported answers, the assignment's given code and whether ``specdec_lib``'s verifiers are switched
off. That process compiles the functions (a default argument, decorator or class body that runs
code runs here, where nothing can be won), then answers calls: the grader's ``HostedFunction``
sends the arguments, plain data only (checked with ``transfer.encode``, then pickled: the grader
trusts its own data, and pickling is what keeps a call cheap; a numpy ``Generator`` travels with
its state, which is copied back after the call so the caller's stream moves on as if the function
had drawn from it). The answer comes back as JSON, plain data or the name of the exception raised,
and is read by ``transfer.decode``, which never runs code. The tests and their assertions stay in
the grader.

"Implement, don't call": unless the assignment allows them, every ``specdec_lib`` function whose
name starts with ``verify`` has its code replaced, in this process, by one that raises
``NotImplementedError`` ("implement it yourself"), wherever it is referenced from; afterwards a
second Landlock layer stops this process from reading the course packages' files, so a reload or
an ``exec`` of their source cannot bring the originals back.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import json
import os
import pickle
import pkgutil
import select
import signal
import struct
import subprocess
import sys
import time

from .transfer import decode, encode, load_code, load_data, read_answers

MAX_REPLY_BYTES = 20_000_000
_REFUSAL = (
    "this assignment asks you to implement verification yourself: specdec_lib's verifiers are "
    "switched off while your function is graded"
)
_BUILTIN_ERRORS = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception) and not issubclass(value, Warning)
}


class HostError(RuntimeError):
    """The process that runs the submitted functions ended, broke the protocol or ran out of time."""


def read_line(fd: int, deadline: float, buffer: bytearray) -> bytes:
    """One newline-terminated message from ``fd`` by ``deadline`` (bounded in size)."""
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0:
            raise HostError("no answer in time")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise HostError("the process ended")
            buffer += chunk
            if len(buffer) > MAX_REPLY_BYTES:
                raise HostError(f"an answer larger than {MAX_REPLY_BYTES / 1e6:.0f} MB")
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


class FunctionHost:
    """The grader's end: starts the sandboxed process lazily and restarts it (a few times) after a failure."""

    restarts = 2

    def __init__(self, command: list[str], env: dict, setup: dict, time_limit: float, log):
        self.command, self.env, self.setup, self.time_limit, self.log = command, env, setup, time_limit, log
        self.process = None
        self.problems: dict[str, str] = {}
        self._buffer = bytearray()
        self._starts = 0

    def _start(self) -> None:
        if self._starts > self.restarts:
            raise HostError("it ended too often; no more calls are run")
        self._starts += 1
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=self.env,
            start_new_session=True,
        )
        self._buffer.clear()
        reply = self._exchange(self.setup, deadline=time.monotonic() + self.time_limit + 60)
        self.problems = {str(k): str(v) for k, v in dict(reply.get("problems", {})).items()}

    def _exchange(self, message: dict, deadline: float) -> dict:
        try:
            payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.write(struct.pack("<Q", len(payload)) + payload)
            self.process.stdin.flush()
            reply = json.loads(read_line(self.process.stdout.fileno(), deadline, self._buffer))
            if not isinstance(reply, dict):
                raise HostError("it broke the protocol")
            return reply
        except BaseException as exc:  # a timeout signal included: the process is mid-call, end it
            self.close()
            if isinstance(exc, (OSError, ValueError)):
                raise HostError("it broke the protocol or ended") from None
            raise

    def ready_problems(self) -> dict[str, str]:
        """Start the process now; return what could not be compiled there, by name."""
        if self.process is None:
            self._start()
        return self.problems

    def call(self, name: str, args: tuple, kwargs: dict):
        if self.process is None:
            self._start()
        generators = []

        def outgoing(value):
            if type(value).__name__ == "Generator":
                generators.append(value)
                return GeneratorState(value.bit_generator.state)
            return value

        message = {
            "call": name,
            "args": [outgoing(a) for a in args],
            "kwargs": {k: outgoing(v) for k, v in kwargs.items()},
        }
        reply = self._exchange(message, deadline=time.monotonic() + self.time_limit)
        for generator, state in zip(generators, reply.get("generators", [])):
            generator.bit_generator.state = decode(state) if "$" in state else state  # numpy checks it
        if "raised" in reply:
            error = _BUILTIN_ERRORS.get(str(reply["raised"]), RuntimeError)
            raise error(f"{str(reply['raised'])[:60]}: {str(reply.get('message', ''))[:300]}")
        return decode(reply["value"])

    def close(self) -> None:
        if self.process is not None:
            end_process(self.process)
            self.process = None


def end_process(process: subprocess.Popen) -> None:
    """Kill a process started in its own session with everything in it, reap it and close its pipes."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    process.kill()
    process.wait()
    for pipe in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):  # a flush into a dead process fails; the pipe closes anyway
            pipe.close()


class GeneratorState:
    """A numpy ``Generator`` argument on its way to the host: its state only (unpickling one is slow)."""

    def __init__(self, state: dict):
        self.state = state


class HostedFunction:
    """Stands for a submitted function in the tests: calling it runs the function in the host."""

    def __init__(self, host: FunctionHost, name: str):
        self._host, self.__name__ = host, name

    def __call__(self, *args, **kwargs):
        return self._host.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<submitted function {self.__name__}>"


# --- the sandboxed process -----------------------------------------------------------------------


def _import_library() -> None:
    """Import every ``specdec_lib`` module that needs only numpy and scipy (its files become unreadable)."""
    import specdec_lib

    for module in pkgutil.walk_packages(specdec_lib.__path__, "specdec_lib."):
        try:
            importlib.import_module(module.name)
        except Exception:  # plotting, widgets: not needed by submitted functions
            continue


def switch_off_verifiers() -> list[str]:
    """Give every ``specdec_lib`` verifier (``verify*``) code that refuses; return their names."""

    def refused(*args, **kwargs):
        raise NotImplementedError(_REFUSAL)

    done = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("specdec_lib") or module is None:
            continue
        for attr, value in vars(module).items():
            code = getattr(value, "__code__", None)
            if (
                attr.startswith("verify")
                and code is not None
                and not code.co_freevars
                and getattr(value, "__module__", "").startswith("specdec_lib")
                and code is not refused.__code__
            ):
                value.__code__ = refused.__code__.replace(co_name=value.__name__)
                done.append(f"{value.__module__}.{attr}")
    return sorted(set(done))


def _state(generator) -> dict:
    state = generator.bit_generator.state
    try:
        json.dumps(state)  # PCG64's is plain JSON already: cheaper to send as it is
        return state
    except TypeError:  # MT19937 holds an array
        return encode(state)


def main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # the submission's prints go nowhere
    requests = sys.stdin.buffer

    def receive():
        size = requests.read(8)
        return pickle.loads(requests.read(struct.unpack("<Q", size)[0])) if len(size) == 8 else None

    setup = receive()
    _import_library()
    if not setup.get("library_verifiers"):
        switch_off_verifiers()
    from .sandbox import landlock_abi, restrict

    if landlock_abi():
        restrict(read_dirs=setup["read_dirs"], write_dirs=[os.getcwd()])
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    values, problems = read_answers(setup["answers"])
    load_data(values, namespace, problems)
    for code in setup["given"]:
        exec(compile(code, "<given>", "exec"), namespace)
    load_code(values, namespace, problems)

    def send(message: dict) -> None:
        replies.write(json.dumps(message).encode() + b"\n")
        replies.flush()

    send({"problems": problems})
    import numpy as np

    cache = {}

    def incoming(value):
        if not isinstance(value, GeneratorState):
            return value
        name = value.state["bit_generator"]
        if name not in cache:
            cache[name] = np.random.Generator(getattr(np.random, name)())
        cache[name].bit_generator.state = value.state
        generators.append(cache[name])
        return cache[name]

    while (request := receive()) is not None:
        generators = []
        args = [incoming(a) for a in request["args"]]
        kwargs = {k: incoming(v) for k, v in request["kwargs"].items()}
        try:
            value = namespace[request["call"]](*args, **kwargs)
            reply = {"value": encode(value)}
        except BaseException as exc:  # the function's failure is the test's feedback
            reply = {"raised": type(exc).__name__, "message": str(exc)[:300]}
        reply["generators"] = [_state(g) for g in generators]
        send(reply)
    os._exit(0)  # no atexit hook the submission registered runs


if __name__ == "__main__":
    # run the importable module's main, so the GeneratorState the grader pickles is this class
    from specdec_course.coursework import function_host

    function_host.main()
