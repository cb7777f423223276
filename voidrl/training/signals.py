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
import os
import signal
import sys
import threading
import time
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


def _give_up_after_a_stop_signal(seconds: float, say: Callable[[float], None]) -> None:
    """Watch for stop signals from a thread of its own, through the interpreter's wakeup fd (written by its C-level
    signal handler even while the main thread waits in C++, where no Python handler runs): ``seconds`` after the
    first one, a process still alive is held up where Python cannot act on the signal (a collective or a rendezvous
    waiting for a process that is gone); it prints every thread's stack where faulthandler is on, calls
    ``say(seconds)`` and exits with 128 + the signal's number."""
    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    signal.set_wakeup_fd(writer, warn_on_full_buffer=False)

    def watch() -> None:
        while (signum := os.read(reader, 1)[0]) not in STOP_SIGNALS:
            pass
        faulthandler.dump_traceback_later(seconds + 3, exit=True)  # where even this thread cannot run (the GIL held)
        time.sleep(seconds)
        if faulthandler.is_enabled():
            faulthandler.dump_traceback(all_threads=True)
        say(seconds)
        sys.stderr.flush()
        os._exit(128 + signum)

    threading.Thread(target=watch, name="voidrl-stop-watch", daemon=True).start()


def hold_stop_signals(give_up_after: float | None = None, say: Callable[[float], None] | None = None) -> None:
    """Note SIGINT/SIGTERM instead of dying of them, outside a run's ``GracefulStop`` too: a ``GracefulStop`` installed
    later takes a noted signal as its own (the run stops at its first safe point), and one that ends puts this back.
    For a torchrun rank: torchrun sends SIGTERM to every rank as soon as one exits with a failure, and a rank killed
    then by the default action could not say what it had to (its refusal of an option, a peer's failure).
    A noted signal is acted on only when the main thread runs Python; a rank waiting in C++ for a peer that is gone
    would wait until torchrun kills it, silently. So with ``give_up_after``, a process not ended that many seconds
    after its first stop signal calls ``say(seconds)`` and exits (``_give_up_after_a_stop_signal``). Main thread
    only."""
    if give_up_after is not None:
        _give_up_after_a_stop_signal(give_up_after, say or (lambda seconds: None))

    def note(signum: int, frame) -> None:
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
        self.signum = signum


def stop_with_parent() -> Callable[[], object] | None:
    """What a child process calls first (``Popen``'s ``preexec_fn``, a pool's initializer) so that on Linux the kernel
    sends it SIGTERM when the thread that started it ends, and so the process: an orphaned run checkpoints and stops.
    The libc function is looked up here, in the parent, so that the child runs nothing but the call. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    return functools.partial(ctypes.CDLL(None).prctl, PR_SET_PDEATHSIG, signal.SIGTERM)
