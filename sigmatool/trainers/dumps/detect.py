"""Which trainer wrote a file, told by its field names alone, for a dump read without ``--from``.

Each trainer's writer (docs/trainers.md cites it) writes a fixed set of fields; a file holding all of one
set is that trainer's dump. The sets are checked most specific first, so that AReaL's (which has TRL's
``prompt`` and ``completion`` too) is never read as TRL's. Only a name is said; the file is not read as the
trainer's, since ``--from`` also changes how folders are searched and rewards graded.
"""

from __future__ import annotations

from collections.abc import Sequence

# (trainer, fields its writer always writes), most specific first.
SIGNATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "open-instruct",
        ("step", "prompt_idx", "sample_idx", "prompt_tokens", "reward"),
    ),  # rl_utils.RolloutRecord
    ("nemo-gym", ("_ng_task_index", "_ng_rollout_index", "reward")),  # rollout_collection.py
    ("verifiers", ("example_id", "prompt", "completion", "reward")),  # vf-eval's save_outputs
    ("verifiers", ("id", "prompt", "completion", "reward", "answer")),  # vf-eval before v0.1.6
    ("areal", ("task_id", "prompt", "completion", "reward")),  # WorkflowExecutor._dump_trajectory
    ("skyrl", ("input_prompt", "output_response", "score")),  # dump_per_dataset_eval_results
    ("nemo-rl", ("content", "rewards")),  # Logger.log_batched_dict_as_jsonl from grpo_train / validate
    ("roll", ("responses", "scores")),  # write_to_json_process
    ("verl", ("input", "output", "score", "step")),  # RayPPOTrainer._dump_generations
    ("trl", ("step", "prompt", "completion")),  # GRPOTrainer.log's completions parquet
    ("rlprobe", ("step", "sample_id", "reward_total", "capture_reason")),  # RunWriter's sample shards
    ("miles", ("sample_index", "group_index", "status", "reward", "prompt", "messages")),  # trajectory_rows
    ("wandb-table", ("columns", "data", "ncols", "nrows")),  # Table.to_json(artifact)
)


def trainer_of(names: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """The trainer whose dump has these fields, and the fields that told it; None for any other file.

    >>> trainer_of(["input", "output", "gts", "score", "step", "acc"])
    ('verl', ('input', 'output', 'score', 'step'))
    >>> trainer_of(["prompt", "pass_rate"]) is None
    True
    """
    present = set(names)
    for trainer, fields in SIGNATURES:
        if present.issuperset(fields):
            return trainer, fields
    return None


def dump_hint(names: Sequence[str]) -> str | None:
    """A clause naming the trainer whose dump has these fields and the ``--from`` that reads it, else None.

    >>> dump_hint(["prompt", "completion", "step", "accuracy_reward"])
    'a trl rollout dump (fields step, prompt, completion): read it with --from trl'
    """
    found = trainer_of(names)
    if found is None:
        return None
    trainer, fields = found
    article = "an" if trainer[0] in "aeio" else "a"
    return f"{article} {trainer} rollout dump (fields {', '.join(fields)}): read it with --from {trainer}"
