"""``python -m sigmatool``."""

from sigmatool.cli import main

main()
