"""The web explorer (``modelcheck explore``): a trace, free exploration, expressions,
run results and the state graph in one local page.

* :mod:`.session`: what the page asks, answered as JSON data
  (:class:`~.session.ExploreSession`); :mod:`.states` the JSON of states and paths,
  :mod:`.runview` a run folder's results, :mod:`.neighbourhood` the reachable graph
  around a state;
* :mod:`.app`: the ASGI app (Starlette): the page, its static files, the JSON API;
* :mod:`.server`: the listening socket and the uvicorn server on it;
* ``static/``: the page itself, plain HTML, JavaScript and CSS (no build step, no
  file from elsewhere).

The page keeps the path being explored; the server keeps no per-page state. The
trace's values, labels and changes are those of :mod:`modelcheck.trace.render`,
expressions those of ``trace eval`` and saved paths those that ``trace replay``
checks: the page reads as the terminal does.
"""

from .server import ExploreServer
from .session import ExploreSession

__all__ = ["ExploreServer", "ExploreSession"]
