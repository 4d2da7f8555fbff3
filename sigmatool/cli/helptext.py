"""The help of a command: ``--help`` reads at a glance, ``--help-all`` is the whole manual.

``--help`` gives the description's first paragraph and its examples, the options the command is about, and
the few shared options most runs need (the ``SHARED`` panel: DATA, --col, --samples, --from, --format,
-o, --plot, and any other the examples use), each with the first clause of its help. ``--help-all`` gives the whole description and every
option with its whole help, the rest of the input and output options (``MORE``) included. Both show a
choice as ``[a|b|c]`` and a default as ``[default: X]``, in click's plain two-column layout, which keeps
the help column wide at 80 columns (typer's boxed table leaves it a third of the width).
Nothing here imports polars or numpy.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from enum import Enum
from typing import Any

import click
import typer.core

SHARED = "Input and output"
# The panels of options that only --help-all lists (docs/input.md describes them too).
MORE = ("Input", "Output", "The grader", "Other trainers' loops")
OPTIONS = "Options"
FULL = "sigmatool.help_all"  # set in the context's meta while --help-all renders
EXAMPLE = re.compile(r"^ {4}(sigmatool .*)$", re.MULTILINE)
# Widest first column before an option's help moves to the next line.
TERM_WIDTH = 18
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")


class Command(typer.core.TyperCommand):
    """A command whose help is :func:`write_help`'s, with an eager ``--help-all``."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        return [*super().get_params(ctx), help_all_option()]

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        write_help(self, ctx, formatter, full=bool(ctx.meta.get(FULL)))


def help_all_option() -> click.Option:
    """``--help-all``: print the whole help and exit, before anything else is parsed or checked."""

    def show(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        ctx.meta[FULL] = True
        click.echo(ctx.get_help(), color=ctx.color)
        ctx.exit()

    return click.Option(
        ["--help-all"],
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=show,
        help="Show every option and the whole description, and exit.",
    )


def first_clause(text: str) -> str:
    """The help up to its first full stop or semicolon outside brackets (``e.g.`` is no full stop)."""
    depth = 0
    for i, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        ends = char in ".;" and text[i + 1 : i + 2] in (" ", "")
        if depth == 0 and ends and not text[: i + 1].endswith(ABBREVIATIONS):
            return text[:i]
    return text


def default_of(param: click.Parameter) -> str | None:
    """The default as ``[default: X]`` shows it, or None where none is shown."""
    if not isinstance(param, click.Option) or param.show_default is False:
        return None
    if isinstance(param.show_default, str):
        return param.show_default
    value: Any = param.default
    if value is None or callable(value) or (param.is_flag and not param.secondary_opts):
        return None
    if param.is_flag:
        return (param.opts if value else param.secondary_opts)[0]
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def term_of(param: click.Parameter, ctx: click.Context) -> str:
    """The first column: the option's names (short ones first) and what it takes."""
    if isinstance(param, click.Argument):
        return param.make_metavar(ctx)
    names = ", ".join(sorted(param.opts, key=lambda name: (name.startswith("--"), name)))
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if isinstance(param, click.Option) and param.is_flag:
        return names
    return f"{names} {param.make_metavar(ctx)}"


def text_of(param: click.Parameter, full: bool) -> str:
    """The second column: the help (its first clause unless ``full``), then the default and requirement."""
    text = (getattr(param, "help", None) or "").replace("`", "").strip()
    if not full:
        text = first_clause(text)
    default = default_of(param)
    extra = [f"[default: {default}]" if default is not None else "", "[required]" if param.required else ""]
    return " ".join(part for part in [text, *extra] if part)


def panel_of(param: click.Parameter) -> str:
    panel = getattr(param, "rich_help_panel", None)
    return panel or (SHARED if isinstance(param, click.Argument) else OPTIONS)


def is_help(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and param.name in ("help", "help_all")


def panels(command: click.Command, ctx: click.Context, full: bool) -> dict[str, list[tuple[str, str]]]:
    """Each panel's rows, in order: the command's own panels, then the shared ones.

    Without ``full``, an option of the MORE panels is shown only if the command's examples use it, and then
    in the SHARED panel.
    """
    used = set(" ".join(description(command.help or "", full)[1]).split())
    rows: dict[str, list[tuple[str, str]]] = {}
    # Arguments first (DATA leads the shared panel), then the options in the order the command declares them.
    params = sorted(command.get_params(ctx), key=lambda param: not isinstance(param, click.Argument))
    for param in params:
        panel = panel_of(param)
        if not full and panel in MORE:
            panel = SHARED if used & {*param.opts, *param.secondary_opts} else ""
        if getattr(param, "hidden", False) or not panel or (not full and is_help(param)):
            continue
        rows.setdefault(panel, []).append((term_of(param, ctx), text_of(param, full)))
    own = [name for name in rows if name not in (SHARED, *MORE)]
    return {name: rows[name] for name in [*own, SHARED, *MORE] if rows.get(name)}


def description(text: str, full: bool) -> tuple[list[str], list[str]]:
    """The description's paragraphs (all, or the first) and its example command lines."""
    paragraphs = [p for p in inspect.cleandoc(text).split("\n\n") if p.strip()]
    prose = [p for p in paragraphs if not EXAMPLE.search(p) and not p.startswith("Example")]
    return (prose if full else prose[:1]), EXAMPLE.findall(inspect.cleandoc(text))


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters, never broken inside a word or at its hyphens (``--no-filter``)."""
    return textwrap.wrap(
        " ".join(text.split()), max(width, 20), break_on_hyphens=False, break_long_words=False
    )


def write_paragraphs(formatter: click.HelpFormatter, *texts: str) -> None:
    """Each text as a paragraph of its own, wrapped at the formatter's width."""
    margin = " " * formatter.current_indent
    for text in texts:
        formatter.write_paragraph()
        for line in wrap(text, formatter.width - len(margin)):
            formatter.write(f"{margin}{line}\n")


def write_rows(
    formatter: click.HelpFormatter, rows: list[tuple[str, str]], term_width: int = TERM_WIDTH
) -> None:
    """Terms and their help in two columns; a term wider than ``term_width`` has its help on the next line."""
    margin = " " * formatter.current_indent
    column = term_width + 2
    for term, text in rows:
        lines = wrap(text, formatter.width - len(margin) - column) or [""]
        if len(term) > column - 2:
            for part in _broken(term, formatter.width - len(margin)):
                formatter.write(f"{margin}{part}\n")
            term = ""
        formatter.write(f"{margin}{term:<{column}}{lines[0]}".rstrip() + "\n")
        for line in lines[1:]:
            formatter.write(f"{margin}{'':<{column}}{line}\n")


def _broken(term: str, width: int) -> list[str]:
    """A term as lines of at most ``width``, a long choice ``[a|b|…]`` broken after a ``|``."""
    lines = [""]
    for piece in re.split(r"(?<=\|)", term):
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("  ")
        lines[-1] += piece
    return lines


def write_help(
    command: click.Command, ctx: click.Context, formatter: click.HelpFormatter, full: bool
) -> None:
    """The whole help of ``command`` into ``formatter``: usage, description, examples, options."""
    command.format_usage(ctx, formatter)
    prose, examples = description(command.help or "", full)
    with formatter.indentation():
        write_paragraphs(formatter, *prose)
        if examples:
            write_paragraphs(formatter, "Examples:" if len(examples) > 1 else "Example:")
            for line in examples:
                formatter.write(f"{'':>{formatter.current_indent + 2}}{line}\n")
    for name, rows in panels(command, ctx, full).items():
        with formatter.section(name):
            write_rows(formatter, rows)
    if not full:
        write_paragraphs(
            formatter, f"Every option: sigmatool {ctx.info_name} --help-all; the input forms: docs/input.md"
        )


class Group(typer.core.TyperGroup):
    """The app's own help in the commands' layout: description, commands, options."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_usage(ctx, formatter)
        with formatter.indentation():
            write_paragraphs(formatter, *description(self.help or "", full=True)[0])
        names = self.list_commands(ctx)
        commands = [(name, description(self.commands[name].help or "", False)[0][0]) for name in names]
        with formatter.section("Commands"):
            write_rows(formatter, commands, max(map(len, self.commands)))
        with formatter.section(OPTIONS):
            write_rows(formatter, [(term_of(p, ctx), text_of(p, True)) for p in self.get_params(ctx)])
        write_paragraphs(formatter, "A command's options: sigmatool COMMAND --help (every one: --help-all)")
