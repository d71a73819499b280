"""Compatibility alias: the declared types and their bound forms now live in the types package.

Specs written against ``modelcheck.domains`` keep importing from here; new code imports
from ``modelcheck`` (the declarations) or the family modules of :mod:`modelcheck.types`.
"""

from __future__ import annotations

from .types import *  # noqa: F403  (the whole package's public names)
from .types import __all__ as __all__
