"""The house rules that keep sigmatool readable: one concept per module, short functions, no import cycle,
layers pointing down.

- **One concept per module, no line cap.** A module holds one concept, however long that makes it. A module
  over 700 lines says why in its docstring, in a sentence that starts with "Long because" (for example
  "Long because the eleven trainer layouts share one reader loop."). A module split only to stay short is
  merged back to its concept.
- **Functions stay short**: at most 60 lines each.
- **Faces are small.** A package's ``__init__.py`` is its face: a docstring, imports and ``__all__``, at most
  100 lines; the code lives in named modules beside it (as py-polars keeps it). The top package's face,
  ``sigmatool/__init__.py``, is the library's whole surface and may be longer.
- **No import cycle.** The import graph has an edge for EVERY explicit import of a sigmatool module: at the
  top of a module, inside a function (lazy), and under ``if TYPE_CHECKING:``. ``from sigmatool.a import x``
  is an edge to ``sigmatool.a.x`` when that is a module, else to ``sigmatool.a`` (the package's
  ``__init__``); relative imports are resolved the same way. Python's running of a parent package's
  ``__init__`` on the way to a submodule is not an edge.
- **No arrow up.** Each module belongs to a layer (:data:`LAYERS`, bottom first) and imports only from its
  own layer and the ones below: errors, options and kernels at the bottom, the command line at the top.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "sigmatool"
MODULES = sorted(PACKAGE.rglob("*.py"))
LONG_MODULE_LINES = 700
MAX_FUNCTION_LINES = 60
LONG_BECAUSE = re.compile(r"(?:\A|[.:;!?]\s)\s*Long because\s+\S")

# Import cycles that another change removes; each entry is one strongly connected component, as a set of
# modules. Keep this empty once that change is in.
TEMPORARILY_ALLOWED_CYCLES: list[frozenset[str]] = []


def _ids(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    return [
        (node.name, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_a_module_over_700_lines_says_why(path: Path) -> None:
    if len(path.read_text().splitlines()) <= LONG_MODULE_LINES:
        return
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert LONG_BECAUSE.search(" ".join(docstring.split())), "no sentence starting 'Long because'"


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_every_module_says_its_job_in_a_docstring(path: Path) -> None:
    assert ast.get_docstring(ast.parse(path.read_text()))


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_no_function_is_longer_than_60_lines(path: Path) -> None:
    assert [] == [(name, lines) for name, lines in _functions(path) if lines > MAX_FUNCTION_LINES]


def test_the_long_module_rule_finds_its_sentence() -> None:
    assert LONG_BECAUSE.search("Trainer dumps. Long because every layout is read here.")


def test_the_long_module_rule_wants_a_sentence_of_its_own() -> None:
    assert not LONG_BECAUSE.search("Not Long because of anything.")


# --------------------------------------------------------------------------------------------- small faces

FACE_LINES = 100


def _faces() -> dict[str, int]:
    """Each package's ``__init__.py`` under sigmatool/ (the top one aside) and its lines."""
    return {
        _ids(path): len(path.read_text().splitlines())
        for path in MODULES
        if path.name == "__init__.py" and path.parent != PACKAGE
    }


def test_the_faces_are_found() -> None:
    assert {"sigmatool/track/__init__.py", "sigmatool/cli/__init__.py"} <= set(_faces())


def test_every_package_face_is_at_most_100_lines() -> None:
    assert {} == {face: lines for face, lines in _faces().items() if lines > FACE_LINES}


# --------------------------------------------------------------------------------------------- the graph


def module_name(path: Path) -> str:
    """``sigmatool/load/__init__.py`` → ``sigmatool.load``; ``sigmatool/load/rows.py`` → ``sigmatool.load.rows``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from … import`` names, relative ones resolved against ``module``."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_modules(path: Path, modules: set[str]) -> Iterator[str]:
    """Every sigmatool module that ``path`` imports explicitly, wherever the import statement is."""
    module = module_name(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.split(".")[0] == "sigmatool")
        elif isinstance(node, ast.ImportFrom):
            base = _imported_from(module, path.name == "__init__.py", node)
            if base.split(".")[0] != "sigmatool":
                continue
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def import_graph(paths: list[Path]) -> dict[str, set[str]]:
    modules = {module_name(p) for p in paths}
    return {module_name(p): {m for m in imported_modules(p, modules) if m != module_name(p)} for p in paths}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            target = next((t for t in edges if t in graph), None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        found.append(frozenset(component))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                work.append((target, iter(sorted(graph[target]))))
            elif target in stack:
                low[node] = min(low[node], index[target])
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    """The package's import graph, built once, when a test first reads it (not at collection)."""
    return import_graph(MODULES)


def test_the_graph_sees_lazy_and_type_only_imports() -> None:
    assert {"sigmatool.render", "sigmatool.shown", "sigmatool.load"} <= graph()["sigmatool.cli.run"]


def test_the_graph_resolves_a_submodule_named_in_from_import() -> None:
    assert "sigmatool.kernels" in graph()["sigmatool.figures.groupsize"]


def test_the_cycle_finder_finds_a_cycle_of_three() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert [frozenset({"a", "b", "c"})] == cycles(graph)


def test_no_import_cycle() -> None:
    found = [c for c in cycles(graph()) if c not in TEMPORARILY_ALLOWED_CYCLES]
    assert [] == [sorted(c) for c in found]


# --------------------------------------------------------------------------------------------- layers

# Bottom first. A module's layer is that of its top-level name under sigmatool (sigmatool.load.rows: load).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "options", "kernels", "columns", "cleanup", "memory", "progress", "interrupts"),  # shared
    # The log's query (sql) is read by the engines that run it (load.engine), so it sits below load.
    ("sql",),
    # Every trainer's own formats: its dumps (which load reads), its config keys, defaults and loop.
    ("trainers",),
    ("load", "render", "frames", "segments", "sums", "joins"),  # reading the input, writing outputs, cells
    # Figures draw frames and values (no analysis); a result shows itself through them (sigmatool.shown).
    ("figures", "shown", "credit"),
    ("estimators", "prior"),  # a prompt's value under an estimator
    ("denoise", "audits"),  # counts read back through a measured grader, and the audits that measure it
    (
        "silent",
        "budget",
        "groupsize",
        "simulate",
        "plan",
        "track",
        "preflight",
        "curriculum",
        "check",
        "__init__",
    ),
    ("graders", "rewards"),  # analyses of a rollout log's raw rewards
    # A schedule handed to the trainers: their samplers and exports, over curriculum and plan.
    ("integrations",),
    ("run",),  # one run of the analyses
    ("report",),
    ("cli",),
    ("entry", "__main__", "examplerun"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}

# Imports that a layer never makes although the ranks would allow them.
FORBIDDEN = {
    "sigmatool.kernels": ("polars",),
    "sigmatool.options": ("polars", "numpy"),
    "sigmatool.load": ("sigmatool.render",),
    "sigmatool.render": ("sigmatool.load",),
}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_layer() -> None:
    assert [] == sorted({_top(m) for m in graph()} - set(RANK))


@pytest.mark.parametrize("layer", [name for names in LAYERS for name in names])
def test_no_arrow_up(layer: str) -> None:
    up = [
        (module, target)
        for module, targets in graph().items()
        if _top(module) == layer
        for target in targets
        if RANK.get(_top(target), -1) > RANK[layer]
    ]
    assert [] == sorted(up)


def test_errors_import_nothing() -> None:
    assert set() == graph()["sigmatool.errors"]


def _all_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("package", list(FORBIDDEN))
def test_layers_keep_out_of_their_forbidden_imports(package: str) -> None:
    paths = [p for p in MODULES if module_name(p) == package or module_name(p).startswith(package + ".")]
    wrong = [
        (_ids(p), name)
        for p in paths
        for name in _all_imports(p)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[package])
    ]
    assert [] == wrong


# --------------------------------------------------------------------------------------------- load's descent

# An input's walk through sigmatool.load, bottom first (the face's docstring names the steps): sources (where
# the bytes come from), schema (which columns mean what), scan (the lazy frame of raw columns), values (p, k,
# n, the grid, the histogram or the rows), the walk put together. A module imports only those before it.
LOAD_DESCENT = (
    *("names", "remote", "objects", "grouping", "engine", "sources"),
    *("forms", "schema"),
    "scan",
    *("dataset", "logs", "integrity", "validate", "grid", "histogram", "rows", "loaded", "several"),
    *("read", "runs"),
)


def test_load_descent_lists_every_module_of_load() -> None:
    found = {m.removeprefix("sigmatool.load.") for m in graph() if m.startswith("sigmatool.load.")}
    assert sorted(found) == sorted(LOAD_DESCENT)


def test_load_modules_import_only_downward() -> None:
    rank = {f"sigmatool.load.{name}": i for i, name in enumerate(LOAD_DESCENT)}
    up = [
        (module, target)
        for module, targets in graph().items()
        if module in rank
        for target in targets
        if target == "sigmatool.load" or rank.get(target, -1) > rank[module]
    ]
    assert [] == sorted(up)


def test_the_descent_sees_the_imports_between_load_modules() -> None:
    assert "sigmatool.load.read" in graph()["sigmatool.load.runs"]


# --------------------------------------------------------------------------------------------- loaded values

# Where a histogram and streamed rows are told apart: the loading layer, the cell sums, and the writer
# (which sinks a lazy output and writes an eager one). Every analysis asks sigmatool.load.loaded instead.
TELL_APART = {"sigmatool/load/loaded.py", "sigmatool/sums.py", "sigmatool/render/write.py"}


def _checks_lazy_frames(path: Path) -> bool:
    calls = [
        node
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "isinstance"
        and len(node.args) == 2
    ]
    return any("LazyFrame" in ast.unparse(call.args[1]) for call in calls)


def test_only_loading_sums_and_writing_tell_histograms_from_streamed_rows() -> None:
    assert TELL_APART == {_ids(p) for p in MODULES if _checks_lazy_frames(p)}


# --------------------------------------------------------------------------------------------- one wiring of a run

# A command body is a few lines over the run (sigmatool.run): read, check, value, draw, write.
BODY_LINES = 12


def _command_bodies() -> list[tuple[str, int]]:
    """Each command function of sigmatool/cli and the lines its body (docstring aside) spans."""
    found = []
    for path in MODULES:
        if module_name(path).rpartition(".")[0] != "sigmatool.cli":
            continue
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef) or not any(
                isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command"
                for d in node.decorator_list
            ):
                continue
            body = node.body[1:] if ast.get_docstring(node) else node.body
            lines = {line for statement in body for n in ast.walk(statement) if hasattr(n, "lineno")
                     for line in range(n.lineno, (n.end_lineno or n.lineno) + 1)}  # fmt: skip
            found.append((node.name, len(lines)))
    return found


def test_the_commands_are_found() -> None:
    assert 13 == len(_command_bodies())


def test_every_command_body_is_a_few_lines() -> None:
    assert [] == [(name, lines) for name, lines in _command_bodies() if lines > BODY_LINES]


def test_the_valuation_is_built_in_the_run_alone() -> None:
    # cli/ and report/ get their valuation from a Run, never from sigmatool.estimators.valuation.
    callers = [
        _ids(path)
        for path in MODULES
        if module_name(path).split(".")[1:2] in (["cli"], ["report"], ["run"])
        and re.search(r"\bvaluation\(", path.read_text())
    ]
    assert ["sigmatool/run.py"] == callers


# --------------------------------------------------------------------------------------------- results show themselves

# What show() asks of a result (sigmatool.shown.Shown); a result class is one named ``…Result`` or one that
# has a table view or warnings of its own.
PROTOCOL = ("frame", "view", "figure", "warnings")
# The analyses: a figure draws their frames and values, and imports none of them.
ANALYSES = ("silent", "budget", "groupsize", "plan", "preflight", "track", "simulate", "curriculum")
# Where an answer becomes output (an error's type may name itself elsewhere: sigmatool.errors).
OUTPUT_PATH = ("cli", "render", "figures", "shown", "run", "report")
# Every kind of answer a command writes.
SHOWN = {
    "SilentResult",
    "CheckResult",
    "BudgetResult",
    "GroupSizeResult",
    "PlanResult",
    "PreflightResult",
    "PreflightColumns",
    "TrackResult",
    "Stories",
    "SimulationRun",
    "CurriculumResult",
    "RowsResult",
    "GradersResult",
    "RewardsResult",
}


def _classes() -> Iterator[tuple[str, ast.ClassDef]]:
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                yield _ids(path), node


def _methods(node: ast.ClassDef) -> set[str]:
    return {n.name for n in node.body if isinstance(n, ast.FunctionDef)}


def _is_result(node: ast.ClassDef) -> bool:
    """A result class (the protocol itself, sigmatool.shown.Shown, is none)."""
    if any("Protocol" in ast.unparse(base) for base in node.bases):
        return False
    return node.name.endswith("Result") or bool({"view", "warnings"} & _methods(node))


def test_the_result_classes_are_found() -> None:
    assert SHOWN == {node.name for _, node in _classes() if _is_result(node)}


def test_every_result_shows_itself() -> None:
    missing = [
        (where, node.name, sorted(set(PROTOCOL) - _methods(node)))
        for where, node in _classes()
        if _is_result(node) and not set(PROTOCOL) <= _methods(node)
    ]
    assert [] == missing


def _names_a_type(node: ast.AST) -> bool:
    """``type(x).__name__`` or ``x.__class__.__name__``: a kind of result looked up by its name."""
    if not (isinstance(node, ast.Attribute) and node.attr == "__name__"):
        return False
    inner = node.value
    by_type = isinstance(inner, ast.Call) and getattr(inner.func, "id", "") == "type"
    return by_type or (isinstance(inner, ast.Attribute) and inner.attr == "__class__")


def _dispatches(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.Attribute) and "singledispatch" in ast.unparse(node)


def test_no_module_of_the_output_path_looks_a_result_up_by_its_type() -> None:
    found = [
        (_ids(path), node.lineno)
        for path in MODULES
        if _top(module_name(path)) in OUTPUT_PATH
        for node in ast.walk(ast.parse(path.read_text()))
        if _names_a_type(node) or _dispatches(node)
    ]
    assert [] == found


def test_no_module_of_the_output_path_keeps_a_table_keyed_by_result_names() -> None:
    keyed = [
        (_ids(path), node.lineno)
        for path in MODULES
        if _top(module_name(path)) in OUTPUT_PATH
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Dict)
        and any(
            isinstance(k, ast.Constant) and k.value in SHOWN | {"DataFrame", "LazyFrame"} for k in node.keys
        )
    ]
    assert [] == keyed


def test_the_lookup_rule_sees_a_type_named() -> None:
    assert _names_a_type(ast.parse("type(result).__name__", mode="eval").body)


def test_figures_import_no_analysis() -> None:
    figures = [p for p in MODULES if module_name(p).startswith("sigmatool.figures")]
    wrong = [
        (_ids(p), target)
        for p in figures
        for target in graph()[module_name(p)]
        if target.split(".")[1] in ANALYSES
    ]
    assert [] == wrong


MODULE_NAME = re.compile(r"\Asigmatool(?:\.\w+)+\Z")


def _modules(items: list[ast.expr]) -> bool:
    """Whether a literal list holds module names alone (not a name among other words: a program's file)."""
    return all(
        isinstance(i, ast.Constant) and isinstance(i.value, str) and MODULE_NAME.match(i.value) for i in items
    )


def test_every_module_named_in_a_string_exists() -> None:
    # A command imports its analysis by name (sigmatool.cli.run.check): a name left behind by a move would
    # only fail where no other install of sigmatool answers for it.
    names = {module_name(p) for p in MODULES}
    named = {
        item.value
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Tuple | ast.List) and _modules(node.elts)  # the lists a command imports
        for item in node.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    }
    assert [] == sorted(named - names)


# --------------------------------------------------------------------------------------------- trainer keys

# A trainer's config keys (its own spellings, read from the tables of sigmatool.trainers.settings) are named
# in its wing, sigmatool/trainers/, alone: the rest of the house asks the settings (LoopSettings) for the
# words. Allowed elsewhere: the help= text of an option in sigmatool/cli/ (help text is the manual), and
# docstrings, which may cite the trainer's source that a model mirrors. sigmatool's own names (its output
# columns and its flags: train_batch_size, n, …) are not trainer keys, whoever else spells them so.
WING = "sigmatool.trainers"
# LoopSettings' methods that give a setting's name as its trainer writes it: their argument is the setting
# (a field of LoopSettings, sigmatool's name), which may spell like a trainer's key (batch_multiplier).
ASKS = ("key", "argument")


def _own_names() -> set[str]:
    """sigmatool's output columns and the long names of its flags, with _ for -."""
    import click
    import typer

    from sigmatool.cli import COMMANDS, app
    from sigmatool.cli.commands import _register
    from sigmatool.columns import COLUMNS

    _register(COMMANDS)
    names = set(COLUMNS)
    stack: list[click.Command] = [typer.main.get_command(app)]
    while stack:
        command = stack.pop()
        if isinstance(command, click.Group):
            stack.extend(command.commands.values())
        for option in command.params:
            names.update(f.lstrip("-").replace("-", "_") for f in (*option.opts, *option.secondary_opts))
    return names


@functools.cache
def trainer_words() -> re.Pattern[str]:
    """Every trainer key as a whole word: each dotted key, and each key's last part where that is a
    spelling of its own (``max_num_gen_batches``, ``rollout-batch-size``), with - and _ alike."""
    from sigmatool.trainers.settings import NOTED_KEYS, TRAINER_KEYS

    keys = {key for table, _ in TRAINER_KEYS.values() for key in table}
    keys |= {key for noted in NOTED_KEYS.values() for key in noted}
    own = _own_names()
    words = set(keys)
    for key in keys:
        last = key.rpartition(".")[2]
        if ("_" in last or "-" in last) and last.replace("-", "_") not in own:
            words |= {last.replace("-", "_"), last.replace("_", "-")}
    ordered = sorted((re.escape(w) for w in words), key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?<!\w-)(?:{'|'.join(ordered)})(?![\w]|-\w)")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of a module's, classes' and functions' docstring nodes."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _help_texts(tree: ast.AST) -> set[int]:
    """The ids of the string constants inside a ``help=`` argument."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg == "help"
        for inner in ast.walk(node.value)
    }


def _asked(tree: ast.AST) -> set[int]:
    """The ids of the settings named to ask for the trainer's name of them: ``settings.key("n")``."""
    return {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ASKS
        for arg in node.args
    }


def trainer_keys_named(source: str, cli: bool = False) -> list[tuple[int, str]]:
    """(line, key) of each trainer key in a string constant of a module's ``source`` that is no docstring,
    no setting asked of LoopSettings.key, nor help text in a module of sigmatool/cli/ (``cli``)."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | _asked(tree) | (_help_texts(tree) if cli else set())
    return [
        (node.lineno, match[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed
        for match in trainer_words().finditer(node.value)
    ]


def test_the_trainer_key_rule_finds_a_key_in_a_sentence() -> None:
    source = '"""Doc: max_num_gen_batches."""\nx = f"with max_num_gen_batches {3}"\n'
    assert [(2, "max_num_gen_batches")] == trainer_keys_named(source)


def test_the_trainer_key_rule_leaves_help_text_in_the_command_line() -> None:
    source = 'x = Option("--n", help="verl: actor_rollout_ref.rollout.n.")\n'
    assert [] == trainer_keys_named(source, cli=True)


def test_the_trainer_key_rule_leaves_a_setting_asked_of_its_trainer() -> None:
    assert [] == trainer_keys_named("x = f\"({settings.key('batch_multiplier')} 2)\"\n")


def test_the_trainer_key_rule_reads_help_text_elsewhere() -> None:
    source = 'x = Option("--n", help="verl: actor_rollout_ref.rollout.n.")\n'
    assert [(1, "actor_rollout_ref.rollout.n")] == trainer_keys_named(source)


def test_the_trainer_key_rule_leaves_sigmatools_own_names() -> None:
    assert not trainer_words().search("--max-gen-batches and gen_batch_size, train_batch_size, n")


def test_a_trainer_key_is_named_in_its_wing_only() -> None:
    found = [
        (_ids(path), line, key)
        for path in MODULES
        if not module_name(path).startswith(WING)
        for line, key in trainer_keys_named(path.read_text(), module_name(path).startswith("sigmatool.cli."))
    ]
    assert [] == found
