"""Are a log's groups the groups the run sampled? Counts of the ways they break, each with its way out.

A GRPO group is n rollouts of one prompt. A log read row by row can break that without a word:

- **singleton groups**: a per-rollout part of the prompt (a workspace path, a uuid, a hash) makes every
  rollout its own prompt. When cutting a uuid, a hex run or a path from the texts merges them, the note
  says how many prompts remain and the ``--prompt-mask`` that does it;
- **mixed groups**: a group (``--group-col``, else the prompt key) holds several prompt texts, one of them
  on a single row: the turns of multi-turn rollouts, each turn a row (``--rollout-col`` counts a rollout
  once);
- **shared keys**: a key holds several prompt texts, each on several rows: ids reused across tasks or
  datasets (a second ``--prompt-col`` keys by both);
- **group size**: groups of another size than the n the run sampled (``--rollouts-per-group``, or the
  log's metadata), counted as read.

The input is one frame of the log's rows with the columns of :data:`COLUMNS`; :func:`integrity` counts them
in one pass (and one more per candidate mask, only when there are singleton groups with texts), and
:meth:`Integrity.notes` and :meth:`Integrity.checks` say what it found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from sigmatool.load.dataset import Dataset
from sigmatool.load.names import GROUP, RAW_ID, TEXT
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps import SelectionError, TrainerLog, capture_reasons, selection

# The frame's columns: the group a row was sampled in, its prompt key, its prompt text's hash (null when the
# log has no text) as keyed.
COLUMNS = ("group", "key", "text")

# What may be per rollout in a prompt text, in the order tried: (name, pattern).
CANDIDATE_MASKS: tuple[tuple[str, str], ...] = (
    ("uuid", r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ("path", r"(?:[A-Za-z]:)?(?:/[\w.\-]+){2,}/?"),
    ("hex run", r"\b[0-9a-f]{8,}\b"),
)
SIZES_SHOWN = 4


@dataclass(frozen=True)
class MaskFix:
    """A candidate ``--prompt-mask`` that merges singleton groups: its kind, pattern, and the distinct
    prompt texts before and after it is cut."""

    kind: str
    pattern: str
    before: int
    after: int


@dataclass(frozen=True)
class Integrity:
    """How a log's rows make its groups: ``rows``; ``groups`` and their ``sizes`` (size → groups);
    ``singletons`` (groups of one row); ``n`` (the rollouts per group the run sampled, if known) and
    ``off_sizes`` (size → groups, for groups of another size); ``mixed_sizes`` (size → groups, for groups
    holding several texts, one on a single row); ``keys`` and ``shared`` (keys holding several texts, each on
    several rows); ``mask`` (a cut that merges the singletons, if one does); ``texts`` (the log has prompt
    texts) and ``per_rollout`` (every text is on one row: a conversation, new each rollout)."""

    rows: int
    groups: int
    sizes: dict[int, int]
    singletons: int
    n: int | None
    off_sizes: dict[int, int]
    mixed_sizes: dict[int, int]
    keys: int
    shared: int
    mask: MaskFix | None
    texts: bool
    per_rollout: bool

    @property
    def off(self) -> int:
        return sum(self.off_sizes.values())

    @property
    def mixed(self) -> int:
        return sum(self.mixed_sizes.values())

    def notes(self, who: str = "", shared: bool = True) -> list[str]:
        """One line per finding, with its counts and its way out; a clean log gets none. Without ``shared``
        the shared keys are left to the note on the key's texts (:func:`sigmatool.load.grouping.text_key_notes`)."""
        lines = []
        if self.mask is not None:
            lines.append(who + self.singleton_detail() + "; " + self.singleton_fix())
        if self.mixed:
            lines.append(who + self.mixed_detail() + "; " + self.mixed_fix())
        if self.shared and shared:
            lines.append(who + self.shared_detail() + "; " + self.shared_fix())
        if self.off:
            lines.append(who + self.size_detail() + "; " + self.size_fix())
        return lines

    def singleton_detail(self) -> str:
        text = f"{self.singletons:,} of {self.groups:,} groups hold one rollout"
        if self.mask is None:
            return text
        return (
            f"{text}: cutting a {self.mask.kind} from the prompt texts merges their {self.mask.before:,} texts "
            f"into {self.mask.after:,} prompts (a per-rollout {self.mask.kind} in the prompt)"
        )

    def singleton_fix(self) -> str:
        if self.mask is not None:
            return f"--prompt-mask '{self.mask.pattern}'"
        return "a group of one rollout is silent at every G: check that the prompt key is the prompt"

    def mixed_detail(self) -> str:
        return (
            f"{self.mixed:,} of {self.groups:,} groups hold several prompt texts, one of them on a single row "
            f"(sizes {_sizes(self.mixed_sizes)}): a rollout's turns read as rollouts of their own"
        )

    @staticmethod
    def mixed_fix() -> str:
        return "--rollout-col COL (the column that names each rollout) counts a rollout once"

    def shared_detail(self) -> str:
        return (
            f"{self.shared:,} of {self.keys:,} prompt keys hold several prompt texts, each on several rows: "
            "several prompts share one key (ids reused across tasks or datasets)"
        )

    @staticmethod
    def shared_fix() -> str:
        return "repeat --prompt-col with the column that tells them apart (--prompt-col task --prompt-col id)"

    def size_detail(self) -> str:
        return (
            f"{self.off:,} of {self.groups:,} groups hold other than n = {self.n} rollouts (sizes "
            f"{_sizes(self.off_sizes)}): short or split groups"
        )

    @staticmethod
    def size_fix() -> str:
        return (
            "check that every group's rollouts were logged, and --rollouts-per-group N (the run's "
            "rollouts per prompt) if n is not that"
        )

    def checks(self) -> list[Check]:
        """The group checks as rows: check, status, affected, total, detail, fix."""
        rows = []
        if self.singletons == 0:
            rows.append(Check("singleton_groups", "ok", 0, self.groups, "no group of one rollout", ""))
        else:
            status = "fail" if self.singletons == self.groups else "warn"
            rows.append(
                Check(
                    "singleton_groups",
                    status,
                    self.singletons,
                    self.groups,
                    self.singleton_detail(),
                    self.singleton_fix(),
                )
            )
        if self.n is None:
            rows.append(
                Check(
                    "group_size",
                    "ok" if len(self.sizes) <= 1 else "warn",
                    0 if len(self.sizes) <= 1 else self.groups,
                    self.groups,
                    f"groups of {_sizes(self.sizes)} rollouts; n not known",
                    ""
                    if len(self.sizes) <= 1
                    else "--rollouts-per-group N counts the groups of another size",
                )
            )
        elif self.off:
            rows.append(
                Check("group_size", "warn", self.off, self.groups, self.size_detail(), self.size_fix())
            )
        else:
            rows.append(Check("group_size", "ok", 0, self.groups, f"every group holds n = {self.n}", ""))
        if self.mixed:
            rows.append(
                Check("mixed_groups", "warn", self.mixed, self.groups, self.mixed_detail(), self.mixed_fix())
            )
        else:
            said = "every group holds one prompt text" if self.texts else "no prompt texts to compare"
            rows.append(Check("mixed_groups", "ok", 0, self.groups, said, ""))
        if self.shared:
            rows.append(
                Check("shared_keys", "warn", self.shared, self.keys, self.shared_detail(), self.shared_fix())
            )
        else:
            said = "every prompt key holds one prompt text" if self.texts else "no prompt texts to compare"
            rows.append(Check("shared_keys", "ok", 0, self.keys, said, ""))
        return rows


@dataclass(frozen=True)
class Check:
    """One row of ``sigmatool check``: a test, its status (ok, warn or fail), the items it found out of
    the total, what it found and the way out."""

    check: str
    status: str
    affected: int
    total: int
    detail: str
    fix: str


def _sizes(sizes: dict[int, int]) -> str:
    """``4 (30), 8 (18)``: sizes with their groups, the most common first, a few of them."""
    ordered = sorted(sizes.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{size} ({count:,})" for size, count in ordered[:SIZES_SHOWN])
    return shown + (f", … ({len(ordered) - SIZES_SHOWN} more sizes)" if len(ordered) > SIZES_SHOWN else "")


def integrity(frame: pl.LazyFrame, n: int | None = None, raw: pl.LazyFrame | None = None) -> Integrity:
    """Count the ways the log's groups break (module docstring). ``frame`` has :data:`COLUMNS`; ``raw``,
    when the prompt texts are known, has one column ``text`` of the texts before any ``--prompt-mask`` (the
    candidate masks are tried on them when there are singleton groups)."""
    pairs = frame.group_by("group", "key", "text").agg(pl.len().alias("rows")).collect(engine="streaming")
    per_group, per_key = _per(pairs, "group"), _per(pairs, "key")
    sizes = _counted(per_group["size"])
    texts = bool(pairs["text"].is_not_null().any())
    mixed = per_group.filter((pl.col("texts") > 1) & pl.col("single_text"))
    shared = per_key.filter((pl.col("texts") > 1) & pl.col("repeated"))
    singletons = sizes.get(1, 0)
    text_rows = pairs.filter(pl.col("text").is_not_null())
    if text_rows["text"].n_unique() != text_rows.height:
        text_rows = text_rows.group_by("text").agg(pl.col("rows").sum())
    per_rollout = texts and bool((text_rows["rows"] == 1).all())
    if per_rollout and sizes.get(1, 0) != per_group.height:
        # Every text on one row in groups of several: the text is the rollout's own (its whole conversation),
        # not its prompt's, and says nothing of how the prompts are keyed.
        mixed, shared = mixed.clear(), shared.clear()
    mask = _mask_fix(raw) if singletons and raw is not None else None
    return Integrity(
        rows=int(pairs["rows"].sum()),
        groups=per_group.height,
        sizes=sizes,
        singletons=singletons,
        n=n,
        off_sizes={} if n is None else {s: c for s, c in sizes.items() if s != n},
        mixed_sizes=_counted(mixed["size"]),
        keys=per_key.height,
        shared=shared.height,
        mask=mask,
        texts=texts,
        per_rollout=per_rollout,
    )


def _per(pairs: pl.DataFrame, name: str) -> pl.DataFrame:
    """Per group (or key): its ``size`` in rows, its distinct non-null ``texts``, whether one text is on a
    single row (``single_text``) and whether every text is on several (``repeated``). Where each holds one
    (group, key, text) of ``pairs`` (no group column, a key that is its text), read off them as they are."""
    if pairs[name].n_unique() == pairs.height:
        return pairs.select(
            pl.col(name),
            pl.col("rows").alias("size"),
            pl.col("text").is_not_null().cast(pl.UInt32).alias("texts"),
            (pl.col("rows") == 1).alias("single_text"),
            (pl.col("rows") > 1).alias("repeated"),
        )
    # Each (name, text) once, so that a count of non-null texts is one of distinct texts.
    return (
        pairs.group_by(name, "text")
        .agg(pl.col("rows").sum())
        .group_by(name)
        .agg(
            pl.col("rows").sum().alias("size"),
            pl.col("text").count().alias("texts"),
            (pl.col("rows") == 1).any().alias("single_text"),
            (pl.col("rows") > 1).all().alias("repeated"),
        )
    )


def _counted(sizes: pl.Series) -> dict[int, int]:
    counts = sizes.value_counts(sort=True, name="groups")
    return {int(s): int(c) for s, c in counts.iter_rows()}


# The candidate masks are tried on the first texts; only one that merges some there is tried on them all.
MASK_SAMPLE = 20_000


def _mask_fix(raw: pl.LazyFrame) -> MaskFix | None:
    """The candidate mask that merges the most prompt texts, if any merges some: each tried on the first
    :data:`MASK_SAMPLE` texts, and the best of those on every text (one more pass)."""
    sample = raw.select(pl.col("text").drop_nulls()).head(MASK_SAMPLE).collect()["text"]
    best: tuple[str, str] | None = None
    fewest = sample.n_unique()
    for kind, pattern in CANDIDATE_MASKS:
        after = sample.str.replace_all(pattern, "…").n_unique()
        if after < fewest:
            best, fewest = (kind, pattern), after
    if best is None:
        return None
    text = pl.col("text").drop_nulls()
    counts = raw.select(
        text.n_unique().alias("before"), text.str.replace_all(best[1], "…").n_unique().alias("after")
    )
    before, after = counts.collect(engine="streaming").row(0)
    return MaskFix(best[0], best[1], int(before), int(after)) if after < before else None


def log_integrity(ds: Dataset) -> Integrity | None:
    """The group checks of a rollout log (``--rollouts``, ``--from``), None for any other input. The groups
    are the ``--group-col`` (a trainer's own groups with ``--from``), else the prompt keys, per ``--by``
    group; a trainer's prompts are hashed, so their texts are compared by hash."""
    if ds.log is not None:
        return dump_integrity(ds.log, ds.options)
    if ds.raw is None or not ds.options.rollouts or ds.options.engine != "polars":
        return None  # an engine's log is counted where it lives, never read here
    return rows_integrity(ds.raw, ds.by, ds.options)


def dump_integrity(log: TrainerLog, opts: InputOptions) -> Integrity:
    """The group checks of a trainer's dumps: its own groups, its prompts' hashes as their texts."""
    frame = log.frame.select(pl.col("group"), pl.col("prompt").alias("key"), pl.col("prompt").alias("text"))
    return integrity(frame, opts.rollouts_per_group or log.per_group)


def rows_integrity(raw: pl.LazyFrame, by: Sequence[str], opts: InputOptions) -> Integrity:
    """The group checks of a ``--rollouts`` log's raw rows (prompt key, and the group and text columns the
    scan read), per ``by`` group."""
    schema = raw.collect_schema()
    # The prompt text: its own column, else the key when the key is text (one --prompt-col of text).
    if TEXT in schema:
        text: pl.Expr | None = pl.col(TEXT).cast(pl.String)
    else:
        text = pl.col(RAW_ID) if schema[RAW_ID] == pl.String else None
    # Keys and texts are compared by their hashes: the pass keeps one number per distinct text, not the text.
    key = pl.col(RAW_ID).hash()
    hashed = key if TEXT not in schema else pl.when(pl.col(TEXT).is_not_null()).then(pl.col(TEXT).hash())
    group = pl.col(GROUP).hash() if GROUP in schema else key
    frame = raw.select(
        (pl.struct(*[pl.col(b) for b in by], group.alias("__g")).hash() if by else group).alias("group"),
        key.alias("key"),
        (pl.lit(None, dtype=pl.UInt64) if text is None else hashed).alias("text"),
    )
    texts = None if text is None or opts.prompt_masks else raw.select(text.alias("text"))
    return integrity(frame, opts.rollouts_per_group, texts)


def log_selection(ds: Dataset) -> SelectionError | None:
    """For a ``--rollouts`` log with rlprobe's ``capture_reason`` column: the rows picked by reward, counted
    (``--from rlprobe`` refuses them as it reads; read as rollouts they are noted)."""
    if not ds.options.rollouts or ds.options.engine != "polars":
        return None
    frames = [source.scan() for source in ds.sources]
    labels = ", ".join(source.label for source in ds.sources[:2]) + (
        " and more" if len(ds.sources) > 2 else ""
    )
    try:
        return selection(capture_reasons(frames), labels)
    except (pl.exceptions.PolarsError, OSError):
        return None
