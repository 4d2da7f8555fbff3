"""How a run of the command line ends: the one place errors end.

:func:`main` maps every way a run can end to its exit code (as httpie's ``core.main`` does): sigmatool's own
errors print one line and exit 1 or 2, usage errors from parsing exit 2, Ctrl-C 130, SIGTERM and SIGHUP
128 + the signal, a closed pipe 0 quietly. Any other exception is a bug and shows its traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

import click
import typer

from sigmatool.cleanup import signals_trapped
from sigmatool.cli import run
from sigmatool.cli.commands import COMMANDS, _group
from sigmatool.cli.run import error, say
from sigmatool.errors import ExitCode, Interrupted, SigmaError, is_broken_pipe


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at devnull so that the final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _message(exc: click.ClickException) -> str:
    """click's message, with the close names of a mistyped command given once (typer and click both add
    them)."""
    if not isinstance(exc, click.UsageError) or not hasattr(exc, "command_name"):
        return exc.format_message()
    close = " or ".join(repr(name) for name in getattr(exc, "possibilities", None) or ())
    return f"No such command {exc.command_name!r}." + (f" Did you mean {close}?" if close else "")


def _usage_error(exc: click.ClickException, args: Sequence[str]) -> int:
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        typer.echo(exc.format_message(), err=True)
        return int(ExitCode.USAGE)
    command = args[0] if args and args[0] in COMMANDS else ""
    hint = f" (see 'sigmatool {command} --help')" if command else " (see 'sigmatool --help')"
    error(f"{_message(exc)}{hint}")
    return int(exc.exit_code)


def _stdout_is_devnull() -> bool:
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return (out.st_dev, out.st_ino) == (null.st_dev, null.st_ino)


def _interrupts_raise() -> Any:
    """From here on a Ctrl-C raises KeyboardInterrupt, which :func:`main` maps to exit 130 once the run's
    temporary files are removed; returns the handler it replaces (the start-up one of
    :func:`sigmatool.interrupts.quiet`), or None off the main thread."""
    try:
        return signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:
        return None


def _run(args: list[str]) -> int:
    run.ARGUMENTS.set(tuple(args))
    command = _group(args)
    with command.make_context("sigmatool", args) as ctx:
        command.invoke(ctx)
    sys.stdout.flush()
    return int(ExitCode.OK)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    stdout_was_null = _stdout_is_devnull()
    before: Any = None
    with signals_trapped():
        try:
            before = _interrupts_raise()
            return _run(args)
        except click.exceptions.Exit as exc:
            return int(exc.exit_code)
        except click.ClickException as exc:
            return _usage_error(exc, args)
        except SigmaError as exc:
            error(str(exc))
            return int(exc.exit_code)
        except (KeyboardInterrupt, click.exceptions.Abort):
            say("interrupted", "red")
            return int(ExitCode.INTERRUPTED)
        except Interrupted as exc:
            say(str(exc), "red")
            return exc.exit_code
        except Exception as exc:  # a bug shows its traceback; only a closed pipe is handled here
            if not is_broken_pipe(exc):
                raise
            # `sigmatool … | head` closed the pipe: that is the reader's choice, not an error.
            _quiet_stdout()
            return int(ExitCode.OK)
        except SystemExit as exc:
            # rich (typer's help, the table view) meets a closed pipe by pointing stdout at /dev/null and
            # exiting 1; a closed pipe is not an error here.
            if exc.code == 1 and not stdout_was_null and _stdout_is_devnull():
                return int(ExitCode.OK)
            raise
        finally:
            if before is not None:
                signal.signal(signal.SIGINT, before)
