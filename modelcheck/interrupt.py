"""Ctrl-C during a run: never lost, never a traceback.

Python turns SIGINT into a ``KeyboardInterrupt`` raised wherever the main thread
happens to be, which can be a place that cannot stop cleanly (a checkpoint commit, a
trace rebuild, printing the result, a library's ``except``) or, once the command
has decided to exit, none at all. :class:`Interrupts` instead *records* the signal
for the duration of a run: the first Ctrl-C sets :attr:`Interrupts.requested`,
which the explorer checks between batches and between levels, so it stops at the
last complete level and reports it (status ``incomplete``, reason ``interrupted``);
a second Ctrl-C raises ``KeyboardInterrupt`` at once, for a user who will not wait.

Guards nest: an inner guard (the explorer's) entered while an outer one (the
``check`` command's) is installed shares the outer one's record, so a Ctrl-C that
arrives while the spec is loading stops the run as soon as it starts. Outside the
main thread, or when SIGINT is ignored or handled by foreign code, a guard installs
nothing and ``requested`` stays false (Ctrl-C then behaves as Python's default).

A backend whose work cannot check ``requested`` while it runs (Spark jobs) gives the
guard ``on_request``: the first Ctrl-C calls it from another thread (to cancel the
jobs), whichever guard of the nest received the signal; with ``replace`` the guard
also takes SIGINT over from a foreign handler (PySpark installs one).

A command's guard made with ``setup=True`` covers a set-up first (loading the spec,
building its action instances and kernel), where nothing partial could be reported:
there the first Ctrl-C raises ``KeyboardInterrupt`` at once (the command exits with
code 3). From the moment an inner guard is entered (the explorer's, or a
simulator's: the run has started), Ctrl-C is recorded as above; :attr:`started` says
whether that moment has come.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType

__all__ = ["Interrupts"]


#: the guards entered on the main thread and not yet left, outermost first
_entered: list[Interrupts] = []


class Interrupts:
    """A context manager that records SIGINT (see the module docstring).

    For example::

        with Interrupts() as stop:
            for batch in batches:
                if stop.requested:
                    break
                work(batch)
    """

    def __init__(self, on_request: Callable[[], None] | None = None, *,
                 replace: bool = False, setup: bool = False) -> None:
        self._count = 0
        self._outer: Interrupts | None = None
        self._previous: object = None
        self._installed = False
        self.on_request = on_request
        self.replace = replace
        self._callbacks: list[Callable[[], None]] = []  # the installed guard's
        self._setup = setup
        self._started = False

    @property
    def started(self) -> bool:
        """Whether a run has started under this guard (an inner guard was entered)."""
        return (self._outer or self)._started

    @property
    def requested(self) -> bool:
        """Whether Ctrl-C was pressed (or :meth:`request` called) since the outermost
        guard was entered."""
        return (self._outer or self)._count > 0

    @requested.setter
    def requested(self, value: bool) -> None:
        """Record a request to stop (True), or forget the ones recorded (False)."""
        (self._outer or self)._count = int(value)

    def request(self) -> None:
        """Ask the run to stop, as a first Ctrl-C does."""
        (self._outer or self)._count += 1

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self._count += 1
        if self._count > 1 or (self._setup and not self._started):
            raise KeyboardInterrupt
        for call in list(self._callbacks):
            threading.Thread(target=call, name="modelcheck-interrupt", daemon=True).start()

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is not threading.main_thread():
            return self
        # a guard entered inside another starts the run, whether or not either
        # installed a handler (SIGINT ignored, or handled by foreign code)
        for g in _entered:
            g._started = True
        _entered.append(self)
        current = signal.getsignal(signal.SIGINT)
        owner = getattr(current, "__self__", None)
        if isinstance(owner, Interrupts):
            self._outer = owner
            owner._started = True
        elif current is signal.default_int_handler or self.replace:
            self._previous = current
            signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        else:
            return self
        if self.on_request is not None:
            (self._outer or self)._callbacks.append(self.on_request)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self in _entered:
            _entered.remove(self)
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._installed = False
        held = (self._outer or self)._callbacks
        if self.on_request is not None and self.on_request in held:
            held.remove(self.on_request)
        self._outer = None
