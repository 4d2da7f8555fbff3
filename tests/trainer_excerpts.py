"""Excerpts of the trainers' own code that sigmatool's exports and samplers are checked against, copied
verbatim (each with its repository, file, lines and commit) so the tests run them without torch, verl, TRL,
prime-rl or open-instruct installed. Where an excerpt needs a class from its package, a minimal stand-in is
given beside it and says so. Only these excerpts are the trainers' code; the tests say what they check.
"""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import math
import random
from collections.abc import Sized
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import betaln
from scipy.stats import beta as beta_distribution


class _Logger:  # stand-in for open_instruct.logger_utils' logger
    def warning(self, *args: Any) -> None:
        pass


logger = _Logger()

# --------------------------------------------------------------------------------------------- open-instruct
# allenai/open-instruct, scripts/data/difficulty_sampling/create_difficulty_map.py @ dd99f9760871078bad843fd03237e2955c39c210
# lines 61-66 (constants), 77-81 (BetaPrior), 92-99 (DifficultyPayload), 177-181 (DifficultyPosteriorRow);
# DifficultyRow (lines 102-116) stood in by the fields these functions read.
EPS = 1e-8
JEFFREYS_PRIOR_ALPHA = 0.5
JEFFREYS_PRIOR_BETA = 0.5
DEFAULT_DIFFICULTY_BUCKETS = 5
POSTERIOR_QUANTILE_GRID_SIZE = 512
POSTERIOR_QUANTILE_BATCH_SIZE = 256


@dataclass(frozen=True)
class BetaPrior:
    alpha: float
    beta: float
    source: str


@dataclass
class DifficultyPayload:
    value: float | None = None
    posterior_mean: float | None = None
    posterior_lower_bound: float | None = None
    expected_quantile: float | None = None
    bucket_index: int | None = None
    bucket_count: int | None = None


@dataclass
class DifficultyRow:  # stand-in: the fields of lines 102-116 that the functions below read
    instance_id: str
    attempt_scores: list[float]
    difficulty: DifficultyPayload = field(default_factory=DifficultyPayload)


@dataclass(frozen=True)
class DifficultyPosteriorRow:
    row: DifficultyRow
    difficulty_alpha: float
    difficulty_beta: float


# create_difficulty_map.py lines 716-717, 828-971 (prior, posterior, buckets, quantiles, fit), 1113-1126.
def expand_binary_attempt_scores(*, pass_count: int, attempt_count: int) -> list[float]:
    return [1.0] * pass_count + [0.0] * (attempt_count - pass_count)


def estimate_beta_prior(rows: list[DifficultyRow], *, prior_mode: str) -> tuple[BetaPrior | None, int]:
    binary_counts = [
        counts for row in rows if (counts := extract_binary_counts(row.attempt_scores)) is not None
    ]
    if not binary_counts:
        return None, 0

    if prior_mode == "jeffreys":
        return BetaPrior(JEFFREYS_PRIOR_ALPHA, JEFFREYS_PRIOR_BETA, "jeffreys"), len(binary_counts)

    prior = fit_empirical_beta_prior(binary_counts)
    if prior is not None:
        return prior, len(binary_counts)

    logger.warning("Falling back to Jeffreys prior after empirical-Bayes fitting failed.")
    return BetaPrior(JEFFREYS_PRIOR_ALPHA, JEFFREYS_PRIOR_BETA, "jeffreys_fallback"), len(binary_counts)


def apply_beta_binomial_difficulty(
    rows: list[DifficultyRow], *, prior: BetaPrior | None, lower_quantile: float, num_buckets: int
) -> list[DifficultyRow]:
    posterior_rows: list[DifficultyPosteriorRow] = []

    for row in rows:
        row.difficulty = DifficultyPayload()

        if prior is None:
            continue

        binary_counts = extract_binary_counts(row.attempt_scores)
        if binary_counts is None:
            continue

        success_count, attempt_count = binary_counts
        posterior_alpha = success_count + prior.alpha
        posterior_beta = attempt_count - success_count + prior.beta
        posterior_mean = posterior_alpha / (posterior_alpha + posterior_beta)
        posterior_lower_bound = float(beta_distribution.ppf(lower_quantile, posterior_alpha, posterior_beta))

        row.difficulty = DifficultyPayload(
            value=max(0.0, min(1.0, 1.0 - posterior_lower_bound)),
            posterior_mean=posterior_mean,
            posterior_lower_bound=posterior_lower_bound,
        )
        posterior_rows.append(
            DifficultyPosteriorRow(row=row, difficulty_alpha=posterior_beta, difficulty_beta=posterior_alpha)
        )

    assign_posterior_difficulty_buckets(posterior_rows, num_buckets=num_buckets)
    return rows


def assign_posterior_difficulty_buckets(
    posterior_rows: list[DifficultyPosteriorRow], *, num_buckets: int
) -> None:
    if not posterior_rows:
        return

    expected_quantiles = estimate_expected_difficulty_quantiles(posterior_rows)
    for posterior_row, expected_quantile in zip(posterior_rows, expected_quantiles, strict=True):
        posterior_row.row.difficulty.expected_quantile = expected_quantile

    if num_buckets <= 0:
        return

    effective_bucket_count = min(num_buckets, len(posterior_rows))
    ordered_rows = sorted(
        zip(posterior_rows, expected_quantiles, strict=True),
        key=lambda item: (item[1], item[0].row.difficulty.value, item[0].row.instance_id),
    )
    base_bucket_size, remainder = divmod(len(ordered_rows), effective_bucket_count)

    cursor = 0
    for bucket_index in range(effective_bucket_count):
        bucket_size = base_bucket_size + (1 if bucket_index < remainder else 0)
        for posterior_row, _expected_quantile in ordered_rows[cursor : cursor + bucket_size]:
            posterior_row.row.difficulty.bucket_index = bucket_index
            posterior_row.row.difficulty.bucket_count = effective_bucket_count
        cursor += bucket_size


def estimate_expected_difficulty_quantiles(
    posterior_rows: list[DifficultyPosteriorRow],
    *,
    grid_size: int = POSTERIOR_QUANTILE_GRID_SIZE,
    batch_size: int = POSTERIOR_QUANTILE_BATCH_SIZE,
) -> list[float]:
    if not posterior_rows:
        return []
    if len(posterior_rows) == 1:
        return [0.5]

    grid = (np.arange(grid_size, dtype=np.float64) + 0.5) / grid_size
    difficulty_alphas = np.asarray([row.difficulty_alpha for row in posterior_rows], dtype=np.float64)
    difficulty_betas = np.asarray([row.difficulty_beta for row in posterior_rows], dtype=np.float64)

    mixture_cdf = np.zeros(grid_size, dtype=np.float64)
    for start in range(0, len(posterior_rows), batch_size):
        stop = start + batch_size
        batch_cdf = beta_distribution.cdf(
            grid[None, :], difficulty_alphas[start:stop, None], difficulty_betas[start:stop, None]
        )
        mixture_cdf += np.nan_to_num(batch_cdf, nan=0.0, posinf=1.0, neginf=0.0).sum(axis=0)
    mixture_cdf /= len(posterior_rows)

    quantiles = np.zeros(len(posterior_rows), dtype=np.float64)
    dx = 1.0 / grid_size
    for start in range(0, len(posterior_rows), batch_size):
        stop = start + batch_size
        batch_pdf = beta_distribution.pdf(
            grid[None, :], difficulty_alphas[start:stop, None], difficulty_betas[start:stop, None]
        )
        quantiles[start:stop] = np.clip(
            np.nan_to_num(batch_pdf, nan=0.0, posinf=0.0, neginf=0.0).dot(mixture_cdf) * dx, 0.0, 1.0
        )

    return quantiles.tolist()


def fit_empirical_beta_prior(binary_counts: list[tuple[int, int]]) -> BetaPrior | None:
    total_successes = sum(success_count for success_count, _ in binary_counts)
    total_attempts = sum(attempt_count for _, attempt_count in binary_counts)
    if total_attempts == 0 or total_successes in {0, total_attempts}:
        return None

    mean_rate = total_successes / total_attempts
    init_alpha = max(mean_rate * 2.0, 1e-3)
    init_beta = max((1.0 - mean_rate) * 2.0, 1e-3)

    def objective(log_params: tuple[float, float]) -> float:
        alpha = math.exp(log_params[0])
        beta = math.exp(log_params[1])
        return -sum(
            betaln(success_count + alpha, attempt_count - success_count + beta) - betaln(alpha, beta)
            for success_count, attempt_count in binary_counts
        )

    result = minimize(
        objective,
        x0=(math.log(init_alpha), math.log(init_beta)),
        method="L-BFGS-B",
        bounds=[(-10.0, 10.0), (-10.0, 10.0)],
    )
    if not result.success:
        logger.warning("Empirical-Bayes fit failed: %s", result.message)
        return None

    return BetaPrior(alpha=math.exp(result.x[0]), beta=math.exp(result.x[1]), source="empirical_bayes")


def extract_binary_counts(attempt_scores: list[float]) -> tuple[int, int] | None:
    if not attempt_scores:
        return None

    success_count = 0
    for score in attempt_scores:
        if math.isclose(score, 0.0, rel_tol=EPS, abs_tol=EPS):
            continue
        if math.isclose(score, 1.0, rel_tol=EPS, abs_tol=EPS):
            success_count += 1
            continue
        return None

    return success_count, len(attempt_scores)


# allenai/open-instruct, open_instruct/difficulty_curriculum.py @ dd99f9760871078bad843fd03237e2955c39c210
# lines 21-48 (paths and coercions), 58-66 (metadata config), 359-366, 446-502 (the strict parser).
def _resolve_path(value: Any, path: str) -> Any:
    current = value
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    return current


def _coerce_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _coerce_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        value = float(value)
        if math.isnan(value) or math.isinf(value):
            return None
        return value
    return None


@dataclass
class DifficultyCurriculumMetadataConfig:
    field: str = "difficulty"
    posterior_mean_field: str = "posterior_mean"
    bucket_index_field: str = "bucket_index"
    bucket_count_field: str = "bucket_count"
    quantile_field: str = "expected_quantile"
    strict: bool = True


@dataclass(frozen=True)
class _ParsedDifficultyMetadata:
    bucket_index: int | None
    bucket_count: int | None
    posterior_mean: float | None
    expected_quantile: float | None
    error: str | None


def _parse_difficulty_metadata(
    example: dict[str, Any], index: int, metadata_config: DifficultyCurriculumMetadataConfig
) -> _ParsedDifficultyMetadata:
    difficulty_blob = _resolve_path(example, metadata_config.field)
    if not isinstance(difficulty_blob, dict):
        return _ParsedDifficultyMetadata(
            bucket_index=None,
            bucket_count=None,
            posterior_mean=None,
            expected_quantile=None,
            error=f"missing '{metadata_config.field}' metadata for dataset index {index}",
        )

    bucket_index = _coerce_int(_resolve_path(difficulty_blob, metadata_config.bucket_index_field))
    bucket_count = _coerce_int(_resolve_path(difficulty_blob, metadata_config.bucket_count_field))
    posterior_mean = _coerce_float(_resolve_path(difficulty_blob, metadata_config.posterior_mean_field))
    expected_quantile = _coerce_float(_resolve_path(difficulty_blob, metadata_config.quantile_field))

    if bucket_index is None or bucket_index < 0:
        return _ParsedDifficultyMetadata(
            bucket_index=None,
            bucket_count=bucket_count,
            posterior_mean=posterior_mean,
            expected_quantile=expected_quantile,
            error=f"invalid bucket_index for dataset index {index}",
        )
    if bucket_count is None or bucket_count <= 0:
        return _ParsedDifficultyMetadata(
            bucket_index=bucket_index,
            bucket_count=None,
            posterior_mean=posterior_mean,
            expected_quantile=expected_quantile,
            error=f"invalid bucket_count for dataset index {index}",
        )
    if posterior_mean is None:
        return _ParsedDifficultyMetadata(
            bucket_index=bucket_index,
            bucket_count=bucket_count,
            posterior_mean=None,
            expected_quantile=expected_quantile,
            error=f"invalid posterior_mean for dataset index {index}",
        )
    if expected_quantile is not None and not 0.0 <= expected_quantile <= 1.0:
        return _ParsedDifficultyMetadata(
            bucket_index=bucket_index,
            bucket_count=bucket_count,
            posterior_mean=posterior_mean,
            expected_quantile=None,
            error=f"invalid expected_quantile for dataset index {index}",
        )
    return _ParsedDifficultyMetadata(
        bucket_index=bucket_index,
        bucket_count=bucket_count,
        posterior_mean=posterior_mean,
        expected_quantile=expected_quantile,
        error=None,
    )


# ------------------------------------------------------------------------------------------------- prime-rl
# PrimeIntellect-ai/prime-rl, src/prime_rl/orchestrator/curriculum/samplers/pool.py
# @ 559b44772e471d1538537b8805cc77f3824a5e64, lines 18-64 (the class, its constructor, task_pool, __next__);
# the task type (verifiers' vf.Task, read for ``.key``) and the config (pydantic) are stood in below.


@dataclass(frozen=True)
class Task:  # stand-in for verifiers.v1.Task: the key the sampler reads
    key: str


@dataclass(frozen=True)
class DifficultyPoolConfig:  # stand-in for configs/orchestrator.py:164-169's pydantic model
    threshold: float
    weight: float


@dataclass
class DifficultyPoolSamplerConfig:  # stand-in for configs/orchestrator.py:180-186
    pools: dict[str, DifficultyPoolConfig]
    seed: int = 42


from collections import Counter
from collections.abc import Iterator, Sequence

TaskSampler = object  # stand-in for samplers/base.py's TaskSampler (an abstract iterator)
vf = None


class DifficultyPoolSampler(TaskSampler):
    """Weight finite tasks by a pool derived from their latest group mean.

    Each pool's threshold is its inclusive maximum reward; the final pool is
    the catch-all. Unseen tasks have neutral weight, so observations affect
    sampling immediately without requiring a full taskset pass.
    """

    def __init__(
        self,
        config: DifficultyPoolSamplerConfig,
        tasks: Sequence[Task] | Iterator[Task],
    ) -> None:
        if not isinstance(tasks, Sequence):
            raise ValueError("DifficultyPoolSampler requires a finite taskset")
        self.tasks = tuple(tasks)
        if not self.tasks:
            raise ValueError("DifficultyPoolSampler requires at least one task")
        keys = [task.key for task in self.tasks]
        duplicates = {key for key, count in Counter(keys).items() if count > 1}
        if duplicates:
            raise ValueError(f"Task keys must be unique within a taskset: {sorted(duplicates)}")
        self.tasks_by_key = dict(zip(keys, self.tasks))
        self.rng = random.Random(config.seed)
        self.pools = config.pools
        ordered = sorted(self.pools.items(), key=lambda item: item[1].threshold)
        self._ordered_pools = tuple(ordered)
        self.task_rewards: dict[str, float] = {}

    def task_pool(self, task_key: str) -> str | None:
        """Return the task's current pool, or ``None`` until it has a score."""
        score = self.task_rewards.get(task_key)
        if score is None:
            return None
        for name, pool in self._ordered_pools:
            if score <= pool.threshold:
                return name
        return self._ordered_pools[-1][0]

    def __next__(self) -> Task:
        weights = []
        for task in self.tasks:
            pool = self.task_pool(task.key)
            weights.append(1.0 if pool is None else self.pools[pool].weight)
        if not any(weights):
            raise RuntimeError("DifficultyPoolSampler has no tasks in a pool with positive weight")
        return self.rng.choices(self.tasks, weights=weights, k=1)[0]


# ---------------------------------------------------------------------------------------------------- verl
# Stand-ins for what the verl excerpts below import: torch's Sampler base and SequentialSampler, torchdata's
# RandomSampler (the shuffled route, not run here), omegaconf's DictConfig and verl's DataProto (type names
# only). A torch DataLoader's batching (drop_last=True, the form verl's StatefulDataLoader is built with) is
# :func:`loader_batches`.
from typing import Generic, Optional, TypeVar
import importlib
import os

T_co = TypeVar("T_co")


class Sampler(Generic[T_co]):  # stand-in for torch.utils.data.Sampler
    def __init__(self, data_source: Optional[Sized] = None) -> None:
        pass


class SequentialSampler(Sampler[int]):  # stand-in for torch.utils.data.SequentialSampler
    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


DictConfig = dict
DataProto = Any


def loader_batches(sampler, batch_size: int):
    """A DataLoader's batches of indices with drop_last=True (torch's BatchSampler), one at a time."""
    batch = []
    for index in sampler:
        batch.append(index)
        if len(batch) == batch_size:
            yield batch
            batch = []


# volcengine/verl, verl/experimental/dataset/sampler.py @ v0.7.0 (f9c855f7cf04d603c9546bc01776c74806a879c1),
# lines 14-42 less the imports stood in above.
from abc import abstractmethod


class AbstractSampler(Sampler[int]):
    """Abstract interface for custom samplers."""

    @abstractmethod
    def __init__(
        self,
        data_source: Sized,
        data_config: DictConfig,
    ):
        pass


class AbstractCurriculumSampler(AbstractSampler):
    """Experimental interface for curriculum learning samplers."""

    @abstractmethod
    def update(self, batch: DataProto) -> None:
        pass


# verl/utils/import_utils.py @ v0.7.0, lines 83-139 (load_module) and 184-197 (load_extern_object).
PKG_PATH_PREFIX = "pkg://"
FILE_PATH_PREFIX = "file://"


def load_module(module_path: str, module_name: Optional[str] = None) -> object:
    """Load a module from a path.

    Args:
        module_path (str):
            The path to the module. Either
                - `pkg_path`, e.g.,
                    - "pkg://verl.utils.dataset.rl_dataset"
                    - "pkg://verl/utils/dataset/rl_dataset"
                - or `file_path` (absolute or relative), e.g.,
                    - "file://verl/utils/dataset/rl_dataset.py"
                    - "/path/to/verl/utils/dataset/rl_dataset.py"
        module_name (str, optional):
            The name of the module to added to ``sys.modules``. If not provided, the module will not be added,
                thus will not be cached and directly ``import``able.
    """
    if not module_path:
        return None

    if module_path.startswith(PKG_PATH_PREFIX):
        module_name = module_path[len(PKG_PATH_PREFIX) :].replace("/", ".")
        module = importlib.import_module(module_name)

    else:
        if module_path.startswith(FILE_PATH_PREFIX):
            module_path = module_path[len(FILE_PATH_PREFIX) :]

        if not os.path.exists(module_path):
            raise FileNotFoundError(f"Custom module file not found: {module_path=}")

        # Use the provided module_name for the spec, or derive a unique name to avoid collisions.
        spec_name = module_name or f"custom_module_{hash(os.path.abspath(module_path))}"
        spec = importlib.util.spec_from_file_location(spec_name, module_path)
        if spec is None or spec.loader is None:
            raise ImportError(f"Could not load module from {module_path=}")

        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise RuntimeError(f"Error loading module from {module_path=}") from e

        if module_name is not None:
            import sys

            # Avoid overwriting an existing module with a different object.
            if module_name in sys.modules and sys.modules[module_name] is not module:
                raise RuntimeError(
                    f"Module name '{module_name}' already in `sys.modules` and points to a different module."
                )
            sys.modules[module_name] = module

    return module


def load_extern_object(module_path: str, object_name: str) -> object:
    """Load an object from a module path.

    Args:
        module_path (str): See :func:`load_module`.
        object_name (str):
            The name of the object to load with ``getattr(module, object_name)``.
    """
    module = load_module(module_path)

    if not hasattr(module, object_name):
        raise AttributeError(f"Object not found in module: {object_name=}, {module_path=}.")

    return getattr(module, object_name)


# verl/trainer/main_ppo.py @ v0.7.0, lines 395-439 (create_rl_sampler). verl 0.8 and later keep its last two
# branches (shuffle, else SequentialSampler) and drop the data.sampler one.
def create_rl_sampler(data_config, dataset):
    """Create a sampler for the dataset.

    Arguments:
        data_config: The data config.
        dataset (Dataset): The dataset.

    Returns:
        sampler (Sampler): The sampler.
    """
    import torch
    from torch.utils.data import SequentialSampler

    # torch.utils.data.RandomSampler could not recover properly
    from torchdata.stateful_dataloader.sampler import RandomSampler

    if data_config.sampler is not None and data_config.sampler.get("class_path", None) is not None:
        curriculum_class = load_extern_object(
            data_config.sampler.class_path,
            data_config.sampler.class_name,
        )
        sampler = curriculum_class(
            data_source=dataset,
            data_config=data_config,
        )
        assert isinstance(sampler, AbstractSampler)
        assert data_config.get("dataloader_num_workers", 8) == 0, (
            "If using curriculum, num_workers must be 0 to prevent data caching. "
            "If the dataloader caches data before the batch is done the "
            "curriculum sampler won't have the opportunity to reorder it. "
        )

    # Use a sampler to facilitate checkpoint resumption.
    # If shuffling is enabled in the data configuration, create a random sampler.
    elif data_config.shuffle:
        train_dataloader_generator = torch.Generator()
        seed = data_config.get("seed")
        if seed is not None:
            train_dataloader_generator.manual_seed(seed)
        sampler = RandomSampler(data_source=dataset, generator=train_dataloader_generator)
    else:
        # If shuffling is disabled, use a sequential sampler to iterate through the dataset in order.
        sampler = SequentialSampler(data_source=dataset)

    return sampler


# verl/trainer/ppo/ray_trainer.py @ v0.7.0: the loader takes ``data.get("gen_batch_size",
# data.train_batch_size)`` indices a step, drop_last=True (lines 392-399), and after each step
# (lines 1626-1627):
#                 if isinstance(self.train_dataloader.sampler, AbstractCurriculumSampler):
#                     self.train_dataloader.sampler.update(batch=batch)


# ----------------------------------------------------------------------------------------------------- TRL
# huggingface/trl, trl/trainer/utils.py @ f2cd57710ae345ea6428ae95363267fcf38a3dc8, lines 695-788
# (RepeatSampler; torch is used only with shuffle=True, not run here).
torch = None


class RepeatSampler(Sampler):
    """
    Sampler that repeats the indices of a dataset in a structured manner.

    Args:
        data_source (`Sized`):
            Dataset to sample from.
        mini_repeat_count (`int`):
            Number of times to repeat each index per batch.
        batch_size (`int`, *optional*, defaults to `1`):
            Number of unique indices per batch.
        repeat_count (`int`, *optional*, defaults to `1`):
            Number of times to repeat the full sampling process.
        shuffle (`bool`, *optional*, defaults to `True`):
            Whether to shuffle the dataset.
        seed (`int`, *optional*):
            Random seed for reproducibility (only affects this sampler).

    Example:
    ```python
    >>> sampler = RepeatSampler(["a", "b", "c", "d", "e", "f", "g"], mini_repeat_count=2, batch_size=3, repeat_count=4)
    >>> list(sampler)
    [4, 4, 3, 3, 0, 0,
     4, 4, 3, 3, 0, 0,
     4, 4, 3, 3, 0, 0,
     4, 4, 3, 3, 0, 0,
     1, 1, 2, 2, 6, 6,
     1, 1, 2, 2, 6, 6,
     1, 1, 2, 2, 6, 6,
     1, 1, 2, 2, 6, 6]
    ```

    ```txt
    mini_repeat_count = 3
          -   -   -
         [0,  0,  0,  1,  1,  1,  2,  2,  2,  3,  3,  3,      |
          4,  4,  4,  5,  5,  5,  6,  6,  6,  7,  7,  7,      |
          8,  8,  8,  9,  9,  9, 10, 10, 10, 11, 11, 11,      |
                                                                repeat_count = 2
          0,  0,  0,  1,  1,  1,  2,  2,  2,  3,  3,  3,      |
          4,  4,  4,  5,  5,  5,  6,  6,  6,  7,  7,  7,      |
          8,  8,  8,  9,  9,  9, 10, 10, 10, 11, 11, 11, ...] |
          ---------   ---------   ---------   ---------
           ---------   ---------   ---------   ---------
            ---------   ---------   ---------   ---------
                         batch_size = 12
    ```
    """

    def __init__(
        self,
        data_source: Sized,
        mini_repeat_count: int,
        batch_size: int = 1,
        repeat_count: int = 1,
        shuffle: bool = True,
        seed: int | None = None,
    ):
        self.data_source = data_source
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count
        self.num_samples = len(data_source)
        self.shuffle = shuffle
        self.seed = seed

        if shuffle:
            self.generator = torch.Generator()  # Create a local random generator
            if seed is not None:
                self.generator.manual_seed(seed)

    def __iter__(self):
        if self.shuffle:
            # E.g., [2, 4, 3, 1, 0, 6, 5] (num_samples = 7)
            indexes = torch.randperm(self.num_samples, generator=self.generator).tolist()
        else:
            indexes = list(range(self.num_samples))

        #    [2, 4, 3, 1, 0, 6, 5]
        # -> [[2, 4, 3], [1, 0, 6], [5]]  (batch_size = 3)
        indexes = [indexes[i : i + self.batch_size] for i in range(0, len(indexes), self.batch_size)]

        #    [[2, 4, 3], [1, 0, 6], [5]]
        # -> [[2, 4, 3], [1, 0, 6]]
        indexes = [chunk for chunk in indexes if len(chunk) == self.batch_size]

        for chunk in indexes:
            for _ in range(self.repeat_count):
                for index in chunk:
                    for _ in range(self.mini_repeat_count):
                        yield index

    def __len__(self) -> int:
        return (
            (self.num_samples // self.batch_size)
            * self.batch_size
            * self.mini_repeat_count
            * self.repeat_count
        )


class GRPOTrainer:  # stand-in for trl's GRPOTrainer: the attributes _get_train_sampler reads
    def __init__(
        self,
        train_dataset,
        num_generations,
        generation_batch_size,
        num_iterations=1,
        steps_per_generation=1,
        seed=42,
        callbacks=(),
    ):
        self.train_dataset = train_dataset
        self.num_generations = num_generations
        self.num_iterations = num_iterations
        self.shuffle_dataset = True
        self.args = type(
            "Args",
            (),
            {
                "generation_batch_size": generation_batch_size,
                "steps_per_generation": steps_per_generation,
                "seed": seed,
            },
        )()
        self.callback_handler = type("Handler", (), {"callbacks": list(callbacks)})()

    # trl/trainer/grpo_trainer.py @ f2cd57710ae345ea6428ae95363267fcf38a3dc8, lines 1235-1271
    def _get_train_sampler(self, dataset=None) -> Sampler:
        # Returns a sampler that
        # 1. ensures each prompt is repeated across multiple processes. This guarantees that identical prompts are
        #    distributed to different GPUs, allowing rewards to be computed and normalized correctly within each prompt
        #    group. Using the same seed across processes ensures consistent prompt assignment, preventing discrepancies
        #    in group formation.
        # 2. repeats the batch multiple times to allow reusing generations across multiple updates. Refer to
        #    _prepare_inputs to see how the generations are stored and reused.

        # In the following figure, the values are the prompt indices. Each row shows the per-step batch
        # returned by `_prepare_inputs`; rows within a `steps_per_generation` block are slices of the same
        # generated batch. When `num_iterations > 1`, that block is reused for multiple optimization passes
        # before regenerating.
        #
        #                                      |   GPU 0  |   GPU 1  |
        #
        #                 global_step   step    <-───>  num_generations=2
        #                                       <-───────> per_device_train_batch_size=3
        #  grad_accum    ▲  ▲  0          0     0   0   1   1   2   2   <- Generate for the first `steps_per_generation` (prompts 0 to 11); store the completions; use the first slice to compute the loss
        #     =2         ▼  |  0          1     3   3   4   4   5   5   <- Take the stored generations and use the second slice to compute the loss
        #                   |
        #                   |  1          2     6   6   7   7   8   8   <- Take the stored generations and use the third slice to compute the loss
        #  steps_per_gen=4  ▼  1          3     9   9  10  10  11  11   <- Take the stored generations and use the fourth slice to compute the loss
        #
        #                      2          4    12  12  13  13  14  14   <- Generate for the second `steps_per_generation` (prompts 12 to 23); store the completions; use the first slice to compute the loss
        #                      2          5    15  15  16  16  17  17   <- Take the stored generations and use the second slice to compute the loss
        #                                          ...
        if dataset is None:
            dataset = self.train_dataset
        return RepeatSampler(
            data_source=dataset,
            mini_repeat_count=self.num_generations,
            batch_size=self.args.generation_batch_size // self.num_generations,
            repeat_count=self.num_iterations * self.args.steps_per_generation,
            shuffle=self.shuffle_dataset,
            seed=self.args.seed,
        )
