"""The explorer's web application: one page, its static files and a JSON API.

This module owns the HTTP surface of ``modelcheck explore`` (a Starlette ASGI app,
:func:`create_app`); the answers come from :class:`~modelcheck.web.session.ExploreSession`.

``GET /`` is the page and ``/static/*`` its script and style (package data: no build
step, nothing fetched from elsewhere; the page's Content-Security-Policy allows its
own origin only). The API:

* ``GET /api/session``: the spec, the loaded trace and run (the overview);
* ``GET /api/initial``: the initial states;
* ``POST /api/successors`` ``{"cells"}``: the enabled actions of a state and their
  successors;
* ``POST /api/eval`` ``{"expr", "path"}``: an expression in every state of a path;
* ``POST /api/save`` ``{"path", "loop"}``: the path as ITF text, replayed;
* ``POST /api/graph`` ``{"cells", "radius"}``: the reachable graph around a state.

A request the API cannot serve gets a JSON ``{"error": message}``: 400 for a
malformed request or expression, 413 for a body over :data:`MAX_BODY`, 415 for a
body that is not JSON, 422 for an error of the spec met while serving it, 500 for
anything else (logged); the server goes on serving. POST bodies must be
``application/json`` (a cross-site form cannot post one), and requests must name
the server's own host (TrustedHostMiddleware: no DNS rebinding).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import ModelcheckError
from ..trace.evaluate import ExpressionError
from .session import ExploreSession
from .states import RequestError

__all__ = ["create_app", "MAX_BODY", "STATIC_DIR"]

#: the largest request body the API reads
MAX_BODY = 16 * 2**20
#: the page's files (package data)
STATIC_DIR = "static"
_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'")

log = logging.getLogger("modelcheck.web")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _static_path(name: str) -> str:
    from importlib.resources import files

    return str(files("modelcheck.web") / STATIC_DIR / name)


def create_app(session: ExploreSession, *, allowed_hosts: Sequence[str] = ("*",)) -> Starlette:
    """The ASGI app serving ``session``; requests for hosts not in ``allowed_hosts``
    are refused (``"*"``: any)."""

    async def index(request: Request) -> Response:
        return FileResponse(_static_path("index.html"), media_type="text/html",
                            headers={"Content-Security-Policy": _CSP,
                                     "Cache-Control": "no-store"})

    def get(fn: Callable[[], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return await _answer(fn)
        return endpoint

    def post(fn: Callable[[dict[str, Any]], dict[str, Any]]
             ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return _error(415, "the request body must be JSON (Content-Type: "
                                   "application/json).")
            size = request.headers.get("content-length")
            if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
                return _error(413, f"the request body is larger than {MAX_BODY:,} bytes.")
            data = bytearray()
            async for chunk in request.stream():
                data += chunk
                if len(data) > MAX_BODY:
                    return _error(413, f"the request body is larger than {MAX_BODY:,} bytes.")
            try:
                body = json.loads(data)
            except (ValueError, RecursionError) as e:
                return _error(400, f"the request body is not JSON: {e}.")
            if not isinstance(body, dict):
                return _error(400, "the request body must be a JSON object.")
            return await _answer(lambda: fn(body))
        return endpoint

    routes = [
        Route("/", index),
        Route("/api/session", get(session.overview)),
        Route("/api/initial", get(session.initial_states)),
        Route("/api/successors", post(session.successors), methods=["POST"]),
        Route("/api/eval", post(session.evaluate), methods=["POST"]),
        Route("/api/save", post(session.save), methods=["POST"]),
        Route("/api/graph", post(session.neighbourhood), methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("modelcheck.web", STATIC_DIR)]), name="static"),
    ]
    return Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))])


async def _answer(fn: Callable[[], dict[str, Any]]) -> Response:
    """Run ``fn`` in a worker thread (spec code may take a while) and answer its JSON,
    or the error it raised."""
    try:
        return JSONResponse(await run_in_threadpool(fn))
    except (RequestError, ExpressionError) as e:
        return _error(400, str(e))
    except ModelcheckError as e:
        return _error(422, str(e))
    except Exception as e:  # noqa: BLE001 - the server goes on; the page shows the message
        log.exception("explore: request failed")
        return _error(500, f"internal error: {type(e).__name__}: {e}")
