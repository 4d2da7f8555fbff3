"""A synthetic GRPO training run with known per-prompt pass rates, written as verl rollout dumps.

The run: ``prompts`` prompts, each with a start pass rate drawn from an equal mixture of Beta(0.7, 1.6) and
Beta(1.6, 0.7) clipped to [0.02, 0.98] (docs/theory.md §6, the fallback start population). Each step takes
the next ``batch`` prompts of a dataloader that reshuffles every epoch, and samples a group of
``group_size`` answers per prompt, each right with the prompt's pass rate at that step. The pass rates
follow a known schedule: ``logit p_j(s) = logit p_j(1) + drift · (s − 1)``. With ``filter_step`` set, that
step's silent groups (all right or all wrong) are dropped before the dump, as a trainer that filters
zero-variance groups without refilling the batch would do.

The dump follows verl: ``RayPPOTrainer._dump_generations`` in ``verl/trainer/ppo/ray_trainer.py`` writes one
file ``{global_steps}.jsonl`` per step (steps count from 1) with one JSON object per rollout: ``input``,
``output``, ``gts``, ``score``, ``step``, then every per-rollout key of the reward function's extra info.
With the DAPO scorer (``compute_score`` in ``verl/utils/reward_score/math_dapo.py``, run by
``DAPORewardManager``) those are ``score`` (1.0 right, −1.0 wrong; it replaces the summed token-level score
in the dump), ``acc`` (Boolean) and ``pred`` (the extracted answer). verl does not dump the group key
``uid`` (at commit b178a3c); this generator adds it as a last key so that a reader can tell two groups of the
same prompt in one step apart. Reading the same files without ``uid``, group by (``step``, ``input``).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from sigmatool.errors import UsageError

DUMP_KEYS = ("input", "output", "gts", "score", "step", "acc", "pred", "uid")
P_CLIP = (0.02, 0.98)


@dataclass(frozen=True)
class RunSpec:
    """The knobs of a synthetic run."""

    prompts: int = 48
    steps: int = 12
    batch: int = 16
    group_size: int = 8
    drift: float = 0.1
    filter_step: int | None = None
    seed: int = 0

    def check(self) -> None:
        """UsageError for a spec that cannot run."""
        if min(self.prompts, self.steps, self.batch, self.group_size) < 1:
            raise UsageError("prompts, steps, batch and group size must each be at least 1")
        if self.batch > self.prompts:
            raise UsageError(
                f"a batch of {self.batch} prompts needs at least that many prompts ({self.prompts})"
            )
        if self.filter_step is not None and not 1 <= self.filter_step <= self.steps:
            raise UsageError(f"the filtering step {self.filter_step} is not one of the steps 1…{self.steps}")


def start_pass_rates(prompts: int, rng: np.random.Generator) -> np.ndarray:
    """Start pass rates: equal mixture of Beta(0.7, 1.6) and Beta(1.6, 0.7), clipped to [0.02, 0.98]."""
    hard = rng.random(prompts) < 0.5
    p = np.where(hard, rng.beta(0.7, 1.6, prompts), rng.beta(1.6, 0.7, prompts))
    return np.asarray(np.clip(p, *P_CLIP), dtype=np.float64)


def pass_rate(start: np.ndarray, step: int, drift: float) -> np.ndarray:
    """The schedule: ``logit p(s) = logit p(1) + drift · (s − 1)``."""
    logit = np.log(start) - np.log1p(-start) + drift * (step - 1)
    return np.asarray(1.0 / (1.0 + np.exp(-logit)), dtype=np.float64)


def _schedule(spec: RunSpec, rng: np.random.Generator) -> list[np.ndarray]:
    """The prompts of each step: consecutive batches of a dataloader reshuffled every epoch."""
    order: list[int] = []
    batches = []
    for _ in range(spec.steps):
        if len(order) < spec.batch:
            order = order + [int(j) for j in rng.permutation(spec.prompts)]
        batches.append(np.array(order[: spec.batch]))
        order = order[spec.batch :]
    return batches


def generate(spec: RunSpec) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rollouts (one row per answer, in dump layout plus ``prompt_id``) and the true pass rates.

    The truth table has ``step``, ``prompt`` and ``p`` for every group sampled, filtered or not.
    """
    spec.check()
    rng = np.random.default_rng(spec.seed)
    start = start_pass_rates(spec.prompts, rng)
    rows: list[dict[str, object]] = []
    truth: list[tuple[int, int, float]] = []
    for step, batch in enumerate(_schedule(spec, rng), start=1):
        p = pass_rate(start[batch], step, spec.drift)
        right = rng.random((len(batch), spec.group_size)) < p[:, None]
        uids = [str(uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | step, version=4)) for _ in batch]
        for j, prompt in enumerate(batch):
            truth.append((step, int(prompt), float(p[j])))
            k = int(right[j].sum())
            if step == spec.filter_step and k in (0, spec.group_size):
                continue
            rows.extend(_group_rows(int(prompt), step, uids[j], right[j]))
    rollouts = pl.DataFrame(rows, schema=_ROLLOUT_SCHEMA, orient="row")
    truth_frame = pl.DataFrame(
        truth, schema={"step": pl.Int64, "prompt": pl.UInt64, "p": pl.Float64}, orient="row"
    )
    return rollouts, truth_frame


_ROLLOUT_SCHEMA = {
    "input": pl.String,
    "output": pl.String,
    "gts": pl.String,
    "score": pl.Float64,
    "step": pl.Int64,
    "acc": pl.Boolean,
    "pred": pl.String,
    "uid": pl.String,
    "prompt_id": pl.UInt64,
}


def _group_rows(prompt: int, step: int, uid: str, right: np.ndarray) -> list[dict[str, object]]:
    answer = str(17 * prompt % 97 + 3)
    question = (
        f"Problem {prompt}: find the value described in exercise {prompt}. Put the answer in \\boxed{{}}."
    )
    out = []
    for i, ok in enumerate(right.tolist()):
        pred = answer if ok else str(int(answer) + 1 + i % 5)
        out.append(
            {
                "input": question,
                "output": f"Working through exercise {prompt} (attempt {i + 1}) gives \\boxed{{{pred}}}.",
                "gts": answer,
                "score": 1.0 if ok else -1.0,
                "step": step,
                "acc": bool(ok),
                "pred": pred,
                "uid": uid,
                "prompt_id": prompt,
            }
        )
    return out


def track_input(rollouts: pl.DataFrame) -> pl.LazyFrame:
    """The generated rollouts in the input contract of :func:`sigmatool.track.track`."""
    return rollouts.lazy().select(
        pl.col("step"),
        pl.col("uid").alias("group"),
        pl.col("prompt_id").alias("prompt"),
        pl.col("acc").alias("right"),
        pl.lit(True).alias("usable"),
    )


def write_verl_dump(rollouts: pl.DataFrame, directory: Path) -> list[Path]:
    """Write one ``{step}.jsonl`` per step, keys in verl's order; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for (step,), part in rollouts.sort("step", maintain_order=True).group_by("step", maintain_order=True):
        lines = [
            json.dumps({key: row[key] for key in DUMP_KEYS}, ensure_ascii=False)
            for row in part.iter_rows(named=True)
        ]
        path = directory / f"{step}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


# The bundled run in sample_data/example_run/: 48 prompts, all in every step, 4 steps, groups of 4, and step 3
# filtered. Leave-one-step-out, the drift rule flags the filtering step for seeds 0 and 1 (z = −4.5, −5.6) and
# misses it for seeds 2–4 (z from −3.2 to −3.6): a run this small cannot be relied on to show it. Seed 1 shows it.
EXAMPLE = RunSpec(prompts=48, steps=4, batch=48, group_size=4, drift=0.15, filter_step=3, seed=1)


def write_example(directory: Path, truth_path: Path | None = None, spec: RunSpec = EXAMPLE) -> list[Path]:
    """Generate ``spec`` and write its verl dump to ``directory``; the true pass rates to ``truth_path``."""
    rollouts, truth = generate(spec)
    paths = write_verl_dump(rollouts, directory)
    if truth_path is not None:
        inputs = rollouts.select(pl.col("prompt_id").alias("prompt"), "input").unique()
        truth.join(inputs, on="prompt", how="left").sort("step", "prompt").write_csv(truth_path)
    return paths


if __name__ == "__main__":
    import sys

    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("sample_data")
    write_example(root / "example_run", root / "example_run_pass_rates.csv")
