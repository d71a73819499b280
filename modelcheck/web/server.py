"""Serving the explorer: a listening socket and a uvicorn server on it.

This module owns where the explorer listens. :func:`bind` opens the socket itself
(so that a port in use or an unknown host is a :class:`~modelcheck.errors.UsageError`
before anything is served, and port 0 gives a free port whose number is known at
once); the socket listens from then on, so the URL answers as soon as it is
printed. :class:`ExploreServer` runs uvicorn on that socket, in the foreground
(:meth:`~ExploreServer.serve`, stopped by Ctrl-C) or in a thread
(:meth:`~ExploreServer.start`/:meth:`~ExploreServer.stop`, for tests and scripts).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import threading

import uvicorn

from ..errors import UsageError
from .app import create_app
from .session import ExploreSession

__all__ = ["ExploreServer", "bind", "is_loopback", "DEFAULT_HOST"]

DEFAULT_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) resolves to loopback addresses only."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def bind(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (0: a free port)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except OSError as e:
        raise UsageError(f"--host {host}: not an address of this machine ({e.strerror or e})."
                         ) from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise UsageError(f"--port {port}: {host}:{port} is already in use (another "
                             "explorer?); choose another port, or --port 0 for any free "
                             "one.") from None
        if e.errno == errno.EACCES:
            raise UsageError(f"--port {port}: not allowed to listen on {host}:{port} (ports "
                             "below 1024 need privileges); choose a port from 1024 up, or "
                             "--port 0.") from None
        raise UsageError(f"--host {host} --port {port}: cannot listen there: "
                         f"{e.strerror or e}.") from None
    return sock


class ExploreServer:
    """The explorer of ``session`` served on ``host``:``port`` (0: a free port)."""

    def __init__(self, session: ExploreSession, host: str = DEFAULT_HOST, port: int = 0,
                 *, quiet: bool = True) -> None:
        self.sock = bind(host, port)
        bound_port = self.sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        #: the page's address
        self.url = f"http://{shown}:{bound_port}/"
        loopback = is_loopback(host)
        allowed = [host, "localhost", "127.0.0.1", "[::1]"] if loopback else ["*"]
        app = create_app(session, allowed_hosts=allowed)
        self._server = uvicorn.Server(uvicorn.Config(
            app, log_level="warning" if quiet else "info", access_log=not quiet,
            lifespan="off", timeout_graceful_shutdown=2))
        self._thread: threading.Thread | None = None

    def serve(self) -> None:
        """Serve until Ctrl-C (raised as ``KeyboardInterrupt`` once the server stopped)."""
        try:
            self._server.run(sockets=[self.sock])
        finally:
            self.sock.close()

    def start(self) -> ExploreServer:
        """Serve in a background thread; the URL answers at once (the socket listens)."""
        self._thread = threading.Thread(target=self.serve, name="modelcheck-explore",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (open connections are closed) and wait for the thread."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> ExploreServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
