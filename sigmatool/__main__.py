"""``python -m sigmatool``."""

from sigmatool.entry import run

if __name__ == "__main__":
    run()
