"""`mcp --worker`: the delivery worker beside the server, as a child process.

A child process, not a thread, for three reasons. A worker that dies — a bug, the kernel's
OOM killer, a `GITPUB_CRASH_AT` point, which ends its process like a SIGKILL — takes only
itself down: the agent's connection stays up and the server starts a new worker, whose
start-up recovery finishes whatever the dead one left mid-way (the store, the job refs and
the remote decide, never memory). The child runs the command `git blogpub run --interval`
itself, so there is one worker loop to trust, not a second one to keep in step; the server
knows it only as a command, as `Publisher.kick` does. And its stdout and git's children
never share a descriptor with the protocol stream: the child's stdout is the server's stderr.

The child must never outlive the server, even a server killed with SIGKILL: its stdin is
a pipe only the server holds open, and end of file there stops it (as SIGTERM does)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

RESTART_DELAYS = (1.0, 2.0, 5.0, 15.0, 60.0)
"""Seconds before starting a dead worker again, by how many died in a row."""

HEALTHY = 60.0
"""A worker that ran this long before it died starts the delay sequence over."""

STOP_GRACE = 5.0
"""Seconds a stopping worker gets to unwind before it is killed."""


def _say(line: str) -> None:
    sys.stderr.write(f"git blogpub: mcp: {line}\n")
    sys.stderr.flush()


class Supervisor:
    """Keeps one worker child running until `stop`."""

    def __init__(self, root: Path, interval: float) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "gitpub.mcpserver.worker",
            str(root),
            repr(interval),
        ]
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._keep, name="gitpub-mcp-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=sys.stderr.fileno()
            )
            _say(f"delivery worker started (pid {self._proc.pid})")
            return self._proc

    def _keep(self) -> None:
        died = 0
        while not self._stopping.is_set():
            started = time.monotonic()
            proc = self._spawn()
            if proc is None:
                return
            rc = proc.wait()
            if self._stopping.is_set():
                return
            died = 0 if time.monotonic() - started >= HEALTHY else died + 1
            delay = RESTART_DELAYS[min(died, len(RESTART_DELAYS)) - 1] if died else 0.0
            _say(f"delivery worker (pid {proc.pid}) exited {rc}; starting another in {delay:g}s")
            self._stopping.wait(delay)

    def stop(self) -> None:
        """Stop the worker: it unwinds, and whatever it was doing is finished by the next
        worker, as after any interruption."""
        with self._lock:
            self._stopping.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()  # end of file: the child's watchdog stops it
            try:
                proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            _say(f"delivery worker (pid {proc.pid}) stopped")
        self._thread.join(STOP_GRACE)


def _watch_parent() -> None:
    """End of file on stdin means the server is gone (or asks us to stop): stop the loop in
    the main thread."""
    try:
        while sys.stdin.buffer.read(65536):
            pass
    finally:
        os.kill(os.getpid(), signal.SIGTERM)


def _stop(signum: int, frame: object) -> None:
    # Unwinds the loop like Ctrl-C does (locks released, the store closed; whatever was under
    # way is finished by the next worker), but quietly: being stopped is no failure.
    raise SystemExit(0)


def child(argv: list[str]) -> None:
    """`python -m gitpub.mcpserver.worker ROOT INTERVAL`: a watchdog on stdin, then
    `git blogpub -C ROOT run --interval INTERVAL` in this very process, through the package's
    own entry point (`python -m gitpub`), as `Publisher.kick` starts a worker."""
    import runpy

    root, interval = argv
    signal.signal(signal.SIGTERM, _stop)
    threading.Thread(target=_watch_parent, name="gitpub-parent-watch", daemon=True).start()
    sys.argv = ["git-blogpub", "-C", root, "run", "--interval", interval]
    runpy.run_module("gitpub", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    child(sys.argv[1:])
