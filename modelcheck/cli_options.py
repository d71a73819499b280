"""Command-line options shared by several ``modelcheck`` commands, in a module that
imports only click, so that the command line starts without the engine."""

from __future__ import annotations

import click

__all__ = ["const_option"]

const_option = click.option(
    "--const", "consts", multiple=True, metavar="K=V",
    help="Override a constant of the spec, e.g. --const N=3 (repeatable).",
)
