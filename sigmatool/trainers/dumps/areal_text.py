"""AReaL's rollout text files from before v0.5.2: ``{dump_dir}/{version}/{qid}.txt``, parsed into records.

Each workflow's ``arun_episode`` (inclusionAI/AReaL v0.5.1, ``areal/workflow/rlvr.py`` ``RLVRWorkflow``;
``multi_turn.py`` and ``vision_rlvr.py`` alike) appends one block per episode, one record per sample::

    idx: {i + 1} / {n_samples}, seqlen: {seqlen}, reward is {reward}.
    prompt is
    <yellow, dim>{prompt}<reset>
    sequence is:
    <yellow, dim>{completion}<reset>

with colorama's codes around the texts (``\\x1b[33m\\x1b[2m`` … ``\\x1b[0m``), which tell where a text that
holds new lines ends. ``idx`` restarts at 1 with each episode: a block is one sampled group.
"""

from __future__ import annotations

import re

import polars as pl

from sigmatool.errors import DataError

_COLOUR = r"(?:\x1b\[[0-9;]*m)*"
RECORD = re.compile(
    r"idx: (?P<idx>\d+) / (?P<of>\d+), seqlen: (?P<seqlen>\d+), reward is (?P<reward>[^\n]*?)\.\n"
    rf"prompt is \n{_COLOUR}(?P<prompt>.*?)(?:\x1b\[0m)?\n"
    rf"sequence is: \n{_COLOUR}(?P<completion>.*?)(?:\x1b\[0m)?\n"
    r"(?=idx: \d+ / \d+, seqlen: \d+, reward is |\Z)",
    re.DOTALL,
)
LAYOUT = "AReaL before v0.5.2: generated/{version}/{qid}.txt"
# A reward function may return a bool; the f-string then writes its name.
_BOOLEANS = {"True": "1", "False": "0"}


def read_generated(path: str) -> pl.DataFrame:
    """The records of one ``.txt`` file: ``block`` (its episode, from 1), ``prompt`` and ``reward`` as written.

    Text that is not a record (a file of another kind, or a record cut short) is a DataError naming the
    character where it starts.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not an {LAYOUT} file: not UTF-8 text") from exc
    blocks, prompts, rewards = [], [], []
    block, at = 0, 0
    for match in RECORD.finditer(text):
        if text[at : match.start()].strip():
            break
        if int(match.group("idx")) == 1 or block == 0:
            block += 1
        blocks.append(block)
        prompts.append(match.group("prompt"))
        rewards.append(_BOOLEANS.get(match.group("reward"), match.group("reward")))
        at = match.end()
    if text[at:].strip():
        raise DataError(
            f"{path}: not an {LAYOUT} file: no 'idx: i / n, seqlen: …, reward is …' record at character {at:,}"
        )
    return pl.DataFrame(
        {"block": blocks, "prompt": prompts, "reward": rewards},
        schema={"block": pl.Int64, "prompt": pl.String, "reward": pl.String},
    )
