"""Which files a trainer writes, where, and what step each holds; refuse pickles by their content.

The layouts are those of each trainer's own code; docs/trainers.md cites the file and function.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from sigmatool.errors import DataError, UsageError
from sigmatool.options import TRAINERS


@dataclass(frozen=True)
class Layout:
    """One trainer's dump-file naming: a regular expression on the path relative to the searched folder."""

    pattern: re.Pattern[str]  # group "step" (if any) is the step or policy version
    shown: str  # the pattern as said to a person
    recursive: bool
    skip: re.Pattern[str] | None = None  # files a folder search leaves out


LAYOUTS: dict[str, Layout] = {
    # verl writes {rollout_data_dir}/{step}.jsonl (RayPPOTrainer._dump_generations), nothing nested.
    "verl": Layout(re.compile(r"(?:^|/)(?P<step>\d+)\.jsonl$"), "{step}.jsonl", recursive=False),
    # TRL writes {output_dir}/completions/completions_{step:05d}.parquet (GRPOTrainer.log).
    "trl": Layout(
        re.compile(r"(?:^|/)completions_(?P<step>\d+)\.parquet$"),
        "completions/completions_{step:05d}.parquet",
        recursive=True,
    ),
    # NeMo-RL writes {log_dir}/train_data_step{N}.jsonl (and val_data_step{N}.jsonl) via
    # Logger.log_batched_dict_as_jsonl; a folder search takes the training dumps only.
    "nemo-rl": Layout(
        re.compile(r"(?:^|/)(?:train|val)_data_step(?P<step>\d+)\.jsonl$"),
        "train_data_step{N}.jsonl",
        recursive=True,
        skip=re.compile(r"(?:^|/)val_data_step\d+\.jsonl$"),
    ),
    # AReaL writes {log_path}/rollout/{tail_version}/{task_id}.jsonl (WorkflowExecutor._dump_trajectory);
    # evaluation rollouts go to eval-rollout/ and are left out of a folder search. Before v0.5.2 its
    # workflows wrote {dump_dir}/{version}/{qid}.txt (RLVRWorkflow.arun_episode), qid any dataset id.
    "areal": Layout(
        re.compile(r"(?:^|/)(?P<step>\d+)/(?:\d+\.jsonl|[^/]+\.txt)$"),
        "rollout/{version}/{task_id}.jsonl, or generated/{version}/{qid}.txt before v0.5.2",
        recursive=True,
        skip=re.compile(r"(?:^|/)eval-rollout/"),
    ),
    # SkyRL writes {export_path}/dumped_evals/global_step_{N}_evals/{data_source}.jsonl plus
    # aggregated_results.jsonl (dump_per_dataset_eval_results); eval_only/ when run without a step.
    "skyrl": Layout(
        re.compile(r"(?:^|/)(?:global_step_(?P<step>\d+)_evals|eval_only)/[^/]+\.jsonl$"),
        "dumped_evals/global_step_{N}_evals/{data_source}.jsonl",
        recursive=True,
        skip=re.compile(r"(?:^|/)aggregated_results\.jsonl$"),
    ),
    # ROLL writes {rollout_dump_dir}/rollout_dump_data.step_{N}.jsonl (write_to_json_process); before
    # late 2025 it appended every step to one {rollout_dump_dir}/rollout_data.jsonl.
    "roll": Layout(
        re.compile(r"(?:^|/)(?:rollout_dump_data\.step_(?P<step>\d+)|rollout_data)\.jsonl$"),
        "rollout_dump_data.step_{N}.jsonl, or rollout_data.jsonl",
        recursive=True,
    ),
    # verifiers' vf-eval writes {output_dir}/evals/{env_id}--{model with / as --}/{uuid[:8]}/results.jsonl
    # beside metadata.json (legacy/utils/path_utils.py, save_utils.py).
    "verifiers": Layout(
        re.compile(r"(?:^|/)results\.jsonl$"), "{env}--{model}/{run}/results.jsonl", recursive=True
    ),
    # NeMo-Gym's rollout collection writes X.jsonl (the rollouts) beside X_materialized_inputs.jsonl and
    # X_failures.jsonl; its reward profiler X_reward_profiling.jsonl (rollout_collection.py, reward_profile.py).
    "nemo-gym": Layout(
        re.compile(r"\.jsonl$"),
        "*.jsonl (rollouts, or *_reward_profiling.jsonl)",
        recursive=True,
        skip=re.compile(r"_(?:materialized_inputs|failures)\.jsonl$"),
    ),
    # open-instruct's --save_traces writes {rollouts_save_path}/{run_name}_rollouts_{shard:06d}.jsonl beside
    # {run_name}_metadata.jsonl (open_instruct/rl_utils.py).
    "open-instruct": Layout(
        re.compile(r"(?:^|/)[^/]*_rollouts_\d{6}\.jsonl$"),
        "{run_name}_rollouts_{shard:06d}.jsonl",
        recursive=True,
    ),
    # W&B writes a table as a run's media/table/{key}_{history step}_{sha256[:20]}.table.json, or in an
    # artifact that users download to artifacts/run-{id}-{key}:v{N}/{key}.table.json (wandb table.py,
    # artifact.py).
    "wandb-table": Layout(re.compile(r"\.table\.json$"), "*.table.json", recursive=True),
    # rlprobe's RunWriter writes {run_dir}/samples/shard-{NNNNN}.parquet beside manifest.json (storage.py),
    # and a rank's under {run_dir}/rank-{NNN}/.
    "rlprobe": Layout(
        re.compile(r"(?:^|/)samples/shard-\d{5}\.parquet$"), "samples/shard-NNNNN.parquet", recursive=True
    ),
    # miles' --dump-details writes {dump_details}/trajectory/{rollout_id}.jsonl (eval_{rollout_id}.jsonl for
    # evaluation, left out of a folder search) beside rollout_data/{rollout_id}.pt (arguments.py,
    # debug_data.py).
    "miles": Layout(
        re.compile(r"(?:^|/)trajectory/(?:eval_)?(?P<step>\d+)\.jsonl$"),
        "trajectory/{rollout_id}.jsonl",
        recursive=True,
        skip=re.compile(r"(?:^|/)eval_\d+\.jsonl$"),
    ),
}
# A W&B table's step where it has no step column: the artifact's version (run-<id>-completions:v<N>/) or
# the history step in a run's media file name (completions_<step>_<sha256[:20]>.table.json).
_VERSION = re.compile(r":v(\d+)/[^/]+\.table\.json$")
_HISTORY = re.compile(r"_(\d+)_[0-9a-f]{20}\.table\.json$")

# torch.save writes a zip archive (or, before torch 1.6 and in plain pickle.dump, a pickle stream).
_ZIP_MAGIC = b"PK\x03\x04"
_PICKLE_NAMES = (".pt", ".pth", ".pkl", ".pickle", ".bin")


@dataclass(frozen=True)
class DumpFile:
    """One dump file and the step (AReaL: policy version) its name or folder gives, if any."""

    path: str
    step: int | None = None


def check_trainer(trainer: str) -> Layout:
    """The layout of a known trainer; a UsageError listing the known ones otherwise."""
    if trainer not in LAYOUTS:
        raise UsageError(f"unknown trainer {trainer!r}; known trainers: {', '.join(TRAINERS)}")
    return LAYOUTS[trainer]


def wandb_step(path: str) -> tuple[int | None, str]:
    """A W&B table file's step from its path: the artifact version, else the history step; and which."""
    posix = Path(os.path.abspath(path)).as_posix()
    version = _VERSION.search(posix)
    if version:
        return int(version.group(1)), "the artifact version (run-<id>-<key>:v<N>)"
    history = _HISTORY.search(posix)
    if history:
        return int(history.group(1)), "W&B's history step in the file name (W&B's counter, not the trainer's)"
    return None, ""


def step_of(trainer: str, path: str) -> int | None:
    """The step a file's path names under the trainer's layout, else None."""
    if trainer == "wandb-table":
        return wandb_step(path)[0]
    match = check_trainer(trainer).pattern.search(Path(os.path.abspath(path)).as_posix())
    if match is None or match.groupdict().get("step") is None:
        return None
    return int(match.group("step"))


def _search(trainer: str, folder: str) -> list[str]:
    layout = LAYOUTS[trainer]
    pattern = "**/*" if layout.recursive else "*"
    found: list[str] = []
    for path in glob.glob(os.path.join(glob.escape(folder), pattern), recursive=layout.recursive):
        relative = Path(os.path.relpath(path, folder)).as_posix()
        if not layout.pattern.search(Path(os.path.abspath(path)).as_posix()) or not os.path.isfile(path):
            continue
        if layout.skip is not None and layout.skip.search("/" + relative):
            continue
        found.append(path)
    if (
        not found
        and trainer == "miles"
        and glob.glob(os.path.join(glob.escape(folder), "**/*.pt"), recursive=True)
    ):
        raise DataError(
            f"{folder}: only torch.save files (rollout_data/{{rollout_id}}.pt), no trajectory/{{rollout_id}}.jsonl: "
            "sigmatool never unpickles a file, since loading one can run code; a multi-turn run's --dump-details "
            "writes the trajectories beside them"
        )
    if not found:
        where = "in it or below it" if layout.recursive else "in it"
        raise DataError(f"{folder}: no {trainer} dump file {where} (looked for {layout.shown})")
    return found


def find_dump_files(trainer: str, args: list[str] | tuple[str, ...]) -> list[DumpFile]:
    """Files, globs or folders into dump files, sorted by step then path; folders are searched."""
    check_trainer(trainer)
    if not args:
        raise UsageError(f"give the {trainer} dump files or the folder that holds them")
    paths: list[str] = []
    for arg in args:
        matches = sorted(glob.glob(arg)) if glob.has_magic(arg) else [arg]
        if not matches:
            raise DataError(f"{arg}: no file matches this pattern")
        for match in matches:
            if os.path.isdir(match):
                paths += _search(trainer, match)
            elif os.path.exists(match):
                paths.append(match)
            else:
                raise DataError(f"{match}: no such file")
    files = [DumpFile(p, step_of(trainer, p)) for p in dict.fromkeys(paths)]
    for file in files:
        refuse_pickle(file.path)
    if trainer == "verifiers":
        files = run_steps(files)
    return sorted(files, key=lambda f: (f.step is None, f.step or 0, f.path))


def natural(text: str) -> tuple[tuple[int, int, str], ...]:
    """A sort key that compares the numbers inside a name as numbers ("step-90" before "step-100")."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


def run_metadata(path: str) -> dict[str, object]:
    """The metadata.json beside a verifiers results.jsonl, or {} when there is none or it cannot be read."""
    import json

    try:
        with open(
            os.path.join(os.path.dirname(os.path.abspath(path)), "metadata.json"), encoding="utf-8"
        ) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def run_label(path: str) -> str:
    """A verifiers run as people name it: its {env}--{model} folder and its run folder."""
    folder = Path(os.path.abspath(path)).parent
    return f"{folder.parent.name}/{folder.name}"


def run_steps(files: list[DumpFile]) -> list[DumpFile]:
    """verifiers runs numbered 1, 2, … as the steps of a run followed step by step (each run one checkpoint's
    eval): in order of their model's name (numbers in it compared as numbers), then their folder."""

    def key(file: DumpFile) -> tuple[object, ...]:
        model = str(run_metadata(file.path).get("model") or "")
        return (natural(model), natural(run_label(file.path)))

    ordered = sorted(files, key=key)
    return [DumpFile(f.path, i) for i, f in enumerate(ordered, start=1)]


def refuse_pickle(path: str) -> None:
    """DataError for a pickle or torch.save file, told by its first bytes (and its name)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
    pickled = head.startswith(_ZIP_MAGIC) or (len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5)
    if pickled or path.lower().endswith(_PICKLE_NAMES):
        raise DataError(
            f"{path}: a Python pickle or torch.save file (as slime's --save-debug-rollout-data and "
            "SkyRL's dump_data_batch write); sigmatool never unpickles a file, since loading one can "
            "run code. Export the rollouts to JSON lines or parquet (prompt, reward) and read them "
            "with --rollouts"
        )
