"""Stopping a run on SIGINT (Ctrl-C) or SIGTERM (schedulers, ``timeout``) with a checkpoint.

The first signal is only noted: the run stops at its next safe point (between two
vector steps of a collection, or after the update in progress with its logging,
evaluation and checkpoint), so the checkpoint it writes holds a state the run really
passed through, never a half-applied update. A second signal stops at once, without a
new checkpoint.
"""

from __future__ import annotations

import ctypes
import faulthandler
import functools
import signal
import sys
import threading
from collections.abc import Callable

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
PR_SET_PDEATHSIG = 1


class RunStopped(KeyboardInterrupt):
    """The run was stopped by signal ``signum``; ``forced``: by a second signal, without waiting for a safe point."""

    def __init__(self, signum: int, forced: bool = False):
        super().__init__(signum, forced)
        self.signum = signum
        self.forced = forced

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


_held: list[int] = []
"""Stop signals that arrived while ``hold_stop_signals``'s handler was in place (the first is honoured)."""
_stuck_after: list[float] = []
"""``hold_stop_signals``'s ``report_stuck_after``, when given."""


def _watch_the_stop() -> None:
    """Where Python's faulthandler is on, print every thread's stack if this process is still alive
    ``report_stuck_after`` seconds after a stop signal: a rank that torchrun will kill shows where it was stuck."""
    if _stuck_after and faulthandler.is_enabled():
        faulthandler.dump_traceback_later(_stuck_after[0], exit=False)


def hold_stop_signals(report_stuck_after: float | None = None) -> None:
    """Note SIGINT/SIGTERM instead of dying of them, outside a run's ``GracefulStop`` too: a ``GracefulStop`` installed
    later takes a noted signal as its own (the run stops at its first safe point), and one that ends puts this back.
    For a torchrun rank: torchrun sends SIGTERM to every rank as soon as one exits with a failure, and a rank killed
    then by the default action could not say what it had to (its refusal of an option, a peer's failure).
    ``report_stuck_after``: seconds after the first stop signal at which, where faulthandler is enabled
    (``PYTHONFAULTHANDLER=1``), every thread's stack is printed if the process has not ended. Main thread only."""
    if report_stuck_after is not None:
        _stuck_after[:] = [report_stuck_after]

    def note(signum: int, frame) -> None:
        if not _held:
            _watch_the_stop()
        _held.append(signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, note)


class RunAborted(RuntimeError):
    """The run cannot go on (e.g. a part it depends on died); the message says what was kept and how to resume."""


class GracefulStop:
    """Context manager that records the first SIGINT/SIGTERM and raises ``RunStopped`` on the second.

    Poll ``requested`` at safe points, or call ``check()`` there. Outside the main thread
    (where Python cannot install handlers) it installs nothing.
    """

    def __init__(self):
        self.signum: int | None = None
        self.previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def check(self) -> None:
        """Raise ``RunStopped`` if a signal has arrived."""
        if self.signum is not None:
            raise RunStopped(self.signum)

    def __enter__(self) -> GracefulStop:
        self.install()
        return self

    def install(self) -> None:
        """Install the handlers; again after a library replaced them with its own (``ray.init`` installs a SIGTERM
        handler that exits at once). ``__exit__`` restores the handlers found by the first call."""
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self.previous.setdefault(signum, signal.signal(signum, self._handle))
            if _held and self.signum is None:
                self.signum = _held[0]

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame) -> None:
        if self.signum is not None:
            raise RunStopped(signum, forced=True)
        if not _held:
            _watch_the_stop()
        self.signum = signum


def stop_with_parent() -> Callable[[], object] | None:
    """What a child process calls first (``Popen``'s ``preexec_fn``, a pool's initializer) so that on Linux the kernel
    sends it SIGTERM when the thread that started it ends, and so the process: an orphaned run checkpoints and stops.
    The libc function is looked up here, in the parent, so that the child runs nothing but the call. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    return functools.partial(ctypes.CDLL(None).prctl, PR_SET_PDEATHSIG, signal.SIGTERM)
