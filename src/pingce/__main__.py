"""``python -m pingce`` runs the command line."""

from .cli import main

main()
