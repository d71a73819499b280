"""``python -m modelcheck`` runs the command line."""

from .cli import main

main()
