"""Nothing lost: the input is never overwritten, signals leave no files behind, outputs get sane permissions.

Every test runs the real command in a subprocess and checks the exit code, the message and the files left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BIGMATH, TOY, one_error_line, run_cli

# Real processes sent real signals, pipes and devices, one by one: `make test-slow` runs them.
pytestmark = pytest.mark.slow

RATES = "pass_rate\n0.5\n0.25\n0.75\n"


def _default_signals() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and Python keeps an ignored
    # SIGINT ignored: give the child the disposition an interactive user's command has.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "rates.csv"
    path.write_text(RATES)
    return path


def _spellings(data: Path) -> dict[str, str]:
    folder = data.parent
    (folder / "link.csv").symlink_to(data.name)
    os.link(data, folder / "hard.csv")
    return {
        "same name": "rates.csv",
        "dot slash": "./rates.csv",
        "absolute": str(data),
        "parent and back": f"../{folder.name}/rates.csv",
        "symlink": "link.csv",
        "hard link": "hard.csv",
    }


@pytest.mark.parametrize(
    "spelling", ["same name", "dot slash", "absolute", "parent and back", "symlink", "hard link"]
)
def test_output_naming_the_input_is_refused_before_reading(data: Path, spelling: str) -> None:
    target = _spellings(data)[spelling]
    done = run_cli("silent", "rates.csv", "-o", target, cwd=data.parent)
    assert 2 == done.returncode
    assert "this is the input file" in one_error_line(done.stderr)
    assert RATES == data.read_text()


def test_output_matching_an_input_glob_is_refused(data: Path) -> None:
    done = run_cli("silent", "*.csv", "-o", "rates.csv", cwd=data.parent)
    assert 2 == done.returncode
    assert RATES == data.read_text()


def test_output_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    done = run_cli("silent", TOY, "-o", tmp_path)
    assert 2 == done.returncode
    assert "is a folder" in one_error_line(done.stderr)


def _part_files(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_while_reading_stdin_removes_the_spooled_copy(tmp_path: Path, signum: int) -> None:
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; print('pass_rate'); print(0.5, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    reader = subprocess.Popen(
        [sys.executable, "-m", "sigmatool", "silent"],
        stdin=writer.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # its spool folder, and no one else's, lands here
        preexec_fn=_default_signals,
    )
    assert writer.stdout is not None
    writer.stdout.close()
    deadline = time.monotonic() + 30
    while not list(tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.02)  # wait until it is spooling
    reader.send_signal(signum)
    _, err = reader.communicate(timeout=30)
    writer.kill()
    writer.wait()
    assert 128 + signum == reader.returncode
    assert b"Traceback" not in err
    assert [] == list(tmp_path.iterdir())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_writing_leaves_no_partial_file(tmp_path: Path, signum: int) -> None:
    big = tmp_path / "big.csv"
    big.write_text("pass_rate\n" + "0.5\n0.25\n" * 300_000)
    out = tmp_path / "out.csv"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sigmatool", "silent", big, "--per-prompt", "--G", "2,4,8,16", "-o", out],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not _part_files(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    assert 128 + signum == proc.returncode
    assert b"Traceback" not in err
    assert [] == _part_files(tmp_path)
    assert not out.exists()


@pytest.mark.parametrize("delay", [0.02, 0.08, 0.2])
def test_ctrl_c_during_start_up_prints_no_traceback(delay: float) -> None:
    # The interpreter's own start-up (before any sigmatool code runs) is Python's; from the entry point on,
    # Ctrl-C ends the run with exit 130 and one word. The child says when the entry point has started.
    code = "import os, sigmatool.entry; os.write(2, b'started\\n'); sigmatool.entry.run()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "silent", BIGMATH],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_signals,
    )
    assert proc.stderr is not None
    assert b"started\n" == proc.stderr.readline()
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert b"Traceback" not in err
    assert 130 == proc.returncode


# The child: a Ctrl-C at the N-th module import once sigmatool's entry module is loaded (the first lines of
# the package, run as the command line, load it), through typer's, polars' and rich's imports and into the
# command.
AT_IMPORT = """
import os, signal, sys
sys.argv = ["sigmatool", "silent", sys.argv[2]]
N, seen = int(sys.argv_n), 0
def hook(event, args):
    global seen
    if event != "import" or not hasattr(sys.modules.get("sigmatool.entry"), "run"):
        return
    seen += 1
    if seen == N:
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(hook)
from sigmatool.entry import run
run()
"""


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 30, 100, 300])
def test_ctrl_c_at_any_import_after_sigmatool_starts_exits_130_without_a_traceback(n: int) -> None:
    code = AT_IMPORT.replace("sys.argv_n", repr(str(n)))
    done = subprocess.run([sys.executable, "-c", code, "silent", str(TOY)], capture_output=True, timeout=60,
                          preexec_fn=_default_signals)  # fmt: skip
    assert b"Traceback" not in done.stderr
    assert 130 == done.returncode


def _through_sigmatool(err: str) -> bool:
    """Whether a traceback passes through sigmatool's code (the interpreter's start-up, site and runpy
    locating the package, comes before any of it)."""
    return any(
        line.strip().startswith("File") and f"{os.sep}sigmatool{os.sep}" in line for line in err.splitlines()
    )


def test_ctrl_c_in_the_first_100_ms_exits_130_and_shows_no_traceback_of_sigmatool() -> None:
    interrupted = 0
    for delay in [i / 100 for i in range(11)]:
        proc = subprocess.Popen([sys.executable, "-m", "sigmatool", "silent", str(TOY)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_signals)  # fmt: skip
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        if proc.returncode == 0:
            continue  # done before the signal came
        assert not _through_sigmatool(err.decode()), err.decode()
        # Killed by the signal itself: it came before the interpreter could handle it (a shell says 130).
        assert proc.returncode in (130, -signal.SIGINT, 1 if b"init_import_site" in err else 130)
        interrupted += proc.returncode == 130
    assert interrupted > 0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_output_follows_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    out = tmp_path / "out.csv"
    code = f"import os, sys; os.umask({umask}); from sigmatool.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "silent", TOY, "-o", out],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    assert 0 == done.returncode
    assert expected == _mode(out)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "txt"])
def test_a_replaced_output_keeps_its_mode(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    out.write_text("old")
    out.chmod(0o640)
    done = run_cli("silent", TOY, "-o", out)
    assert 0 == done.returncode
    assert 0o640 == _mode(out)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Make ``path`` unwritable even for root: no write bits, and (as root) the immutable attribute."""
    mode = path.stat().st_mode
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = os.geteuid() == 0
    if immutable and subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode:
        path.chmod(mode)
        pytest.skip(
            "cannot lock a file against root here: run the tests as a plain user, or on ext4 with chattr"
        )
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        path.chmod(stat.S_IMODE(mode))


def test_an_unwritable_folder_is_one_line_and_exit_1(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    with _locked(locked):
        done = run_cli("silent", TOY, "-o", locked / "out.csv")
    assert 1 == done.returncode
    assert str(locked) in one_error_line(done.stderr)


def test_a_read_only_file_system_is_one_line_and_exit_1() -> None:
    # /proc is read-only for files it does not have: creating one there fails whoever you are.
    done = run_cli("silent", TOY, "-o", "/proc/sigmatool-out.csv")
    assert 1 == done.returncode
    assert "/proc" in one_error_line(done.stderr)


def test_a_read_only_output_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    out.write_text("keep\n")
    with _locked(out):
        done = run_cli("silent", TOY, "-o", out)
    assert 1 == done.returncode
    assert "cannot write it" in one_error_line(done.stderr)
    assert "keep\n" == out.read_text()


def test_a_failed_run_leaves_no_partial_file_and_the_old_output(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    done = run_cli("silent", TOY, "--col", "missing", "-o", out)
    assert 1 == done.returncode
    assert "old\n" == out.read_text()
    assert ["out.csv"] == sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_output_to_dev_null_is_written_in_place(fmt: str) -> None:
    # A device cannot be replaced by a renamed file: it is written directly, and nothing is left beside it.
    done = run_cli("silent", TOY, "--format", fmt, "-o", os.devnull)
    assert (0, []) == (done.returncode, [line for line in done.stderr.splitlines() if "error" in line])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_output_to_a_named_pipe_reaches_its_reader(tmp_path: Path, fmt: str) -> None:
    fifo = tmp_path / "out.pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    done = run_cli("silent", TOY, "--format", fmt, "-o", fifo)
    piped = reader.communicate(timeout=60)[0]
    direct = run_cli("silent", TOY, "--format", fmt, "-o", tmp_path / f"direct.{fmt}")
    assert (0, 0) == (done.returncode, direct.returncode)
    assert (tmp_path / f"direct.{fmt}").read_bytes() == piped
    assert ["direct." + fmt, "out.pipe"] == sorted(p.name for p in tmp_path.iterdir())


def test_output_to_a_socket_is_refused_before_any_work(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "out.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        done = run_cli("silent", TOY, "--format", "csv", "-o", path)
    assert 2 == done.returncode
    assert f"-o {path}: not a regular file, a pipe or a character device" in one_error_line(done.stderr)


def test_output_through_a_symbolic_link_replaces_the_file_it_names(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    named = tmp_path / "runs" / "today.csv"
    named.write_text("old")
    link = tmp_path / "latest.csv"
    link.symlink_to(named)
    done = run_cli("silent", TOY, "-o", link)
    assert 0 == done.returncode
    assert link.is_symlink()
    assert named.read_text().startswith("G,prompts,silent_rate")
    assert [] == _part_files(tmp_path / "runs") + _part_files(tmp_path)


def test_output_to_a_link_to_stdout_redirected_to_a_file_fills_that_file(tmp_path: Path) -> None:
    # `-o /dev/stdout > out.csv`: /dev/stdout is a link to the open file; the link must stay a link.
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    captured = tmp_path / "out.csv"
    with captured.open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "sigmatool", "silent", TOY, "--format", "csv", "-o", link],
            stdout=out,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert 0 == done.returncode
    assert link.is_symlink()
    assert captured.read_text().startswith("G,prompts,silent_rate")


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in found.read_text().split()] if found.exists() else []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_replicates_are_refitted_in_two_processes_leaves_none(signum: int) -> None:
    # Many NPMLE refits are shared with a helper process; Ctrl-C (to the whole process group, as a terminal
    # sends it) or SIGTERM (to the command alone) ends both, with no traceback.
    args = (
        "silent",
        BIGMATH,
        "--prior",
        "npmle",
        "--ci",
        "0.95",
        "--replicates",
        "100000",
        "--format",
        "csv",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "sigmatool", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_signals,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the helper and multiprocessing's resource tracker
    helpers = _children(proc.pid)
    time.sleep(0.5)
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert 128 + signum == proc.returncode
    assert b"Traceback" not in err
    time.sleep(0.5)
    assert [] == [p for p in helpers if Path(f"/proc/{p}").exists() and "zombie" not in _state(p)]


def _state(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    return ""
