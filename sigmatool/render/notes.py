"""Notes for people, said once: the same note about several columns becomes one note naming them all, a note
repeated word for word is said once, and on a terminal each note wraps under its own text.

Several ``--col`` (or inputs) bring one reading note per column, most of them alike but for the column's
name; twenty-five columns brought twenty-nine notes of up to 270 characters, unwrapped. A note is about a
column when it names exactly one quoted name (``'model_03'``) or starts ``--col NAME:``; notes that differ
only in that name are merged where the first of them stood, the names joined in the order the notes came.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

_QUOTED = re.compile(r"'[^'\s][^']*'")
_COL = re.compile(r"\A--col (\S+): ")
_HOLE = "\0"


def _subject(line: str) -> str | None:
    """The one column a note is about, as the note spells it (``'name'`` or the name after ``--col``)."""
    quoted = _QUOTED.findall(line)
    if len(quoted) == 1 and line.count(quoted[0]) == 1:
        return str(quoted[0])
    prefix = _COL.match(line)
    if prefix and not quoted and line.count(prefix.group(1)) == 1:
        return prefix.group(1)
    return None


def _joined(names: Sequence[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def merged(lines: Sequence[str]) -> list[str]:
    """The notes with repeats said once and notes alike but for their column merged.

    >>> merged([
    ...     "the pass rates in 'a' are all multiples of 1/8: read as k of n = 8",
    ...     "the pass rates in 'b' are all multiples of 1/5: read as k of n = 5",
    ...     "the pass rates in 'c' are all multiples of 1/8: read as k of n = 8",
    ...     "no --seed: seed 7",
    ...     "no --seed: seed 7",
    ... ])
    ["the pass rates in 'a' and 'c' are all multiples of 1/8: read as k of n = 8", \
"the pass rates in 'b' are all multiples of 1/5: read as k of n = 5", 'no --seed: seed 7']
    """
    order: list[str] = []
    names: dict[str, list[str]] = {}
    for line in lines:
        subject = _subject(line)
        key = line.replace(subject, _HOLE, 1) if subject else line
        if key not in names:
            order.append(key)
            names[key] = []
        if subject and subject not in names[key]:
            names[key].append(subject)
    return [key.replace(_HOLE, _joined(names[key])) if names[key] else key for key in order]


def wrapped(line: str, width: int, indent: int) -> str:
    """``line`` in lines of at most ``width`` characters (a longer word stands alone), every one after the
    first indented by ``indent`` spaces: under the note's text, clear of its ``note:``.

    >>> print(wrapped("note: the pass rates in 'a' are all multiples of 1/8: read as n = 8", 32, 6))
    note: the pass rates in 'a' are
          all multiples of 1/8: read
          as n = 8
    """
    if width <= indent + 20:  # too narrow to be worth it
        return line
    return textwrap.fill(
        line, width, subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False
    )


def headed(headline: str, warnings: Sequence[str]) -> str:
    """The headline with each warning it does not say yet: one about a pass-rate column (``name: …``, where
    a line of the headline is that column's) at the end of that line, the others on lines of their own."""
    lines = headline.split("\n") if headline else []
    for warning in warnings:
        name, _, text = warning.partition(": ")
        own = next((i for i, line in enumerate(lines) if text and line.startswith(f"{name}: ")), None)
        if own is not None and not _says(lines[own], text):
            lines[own] += f" {text}"
        elif own is None and not _says(headline, warning):
            lines.append(warning)
    return "\n".join(lines)


def _says(headline: str, text: str) -> bool:
    """Whether the headline says ``text`` already, from a word's start (``grpo_share …`` is not said by
    ``drgrpo_share …``)."""
    return f" {text}" in " " + headline.replace("\n", " ")
