"""The typer app that every command module registers on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
import typer.core

from sigmatool import __version__
from sigmatool.cli.helptext import Command, Group


class App(typer.Typer):
    """A typer app whose commands print sigmatool's help (:mod:`sigmatool.cli.helptext`)."""

    def command(
        self, name: str | None = None, *, cls: type[typer.core.TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[Any], Any]:
        return super().command(name, cls=cls or Command, **kwargs)


app = App(
    name="sigmatool",
    cls=Group,
    help=(
        "What a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates.\n\n"
        "For 0/1 rewards the per-prompt GRPO update is exactly the group's reward std σ times a direction "
        "(arXiv:2607.00152). sigmatool turns that identity into answers on a difficulty dataset: silent "
        "groups, the gradient budget across difficulty, the group size each prompt needs, and a controlled "
        "training run.\n\nWith no DATA and nothing piped in, commands run on the bundled Big-Math sample."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sigmatool {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """What a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates."""
