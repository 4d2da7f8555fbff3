"""The report's batch-loop section: what ``sigmatool preflight --config`` finds, on the same page."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BIGMATH, TOY, csv_of, headline, invoke, run_in

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

CONFIG = """\
data:
  train_batch_size: 512
  gen_batch_size: 768
actor_rollout_ref:
  rollout:
    n: 16
algorithm:
  filter_groups:
    enable: True
    max_num_gen_batches: 2
trainer:
  total_training_steps: 300
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("loop") / "dapo.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
def page(config: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report") / "r.html"
    result = invoke("report", BIGMATH, "--preflight-config", config, "-o", out)
    assert 0 == result.exit_code, result.stderr
    return out.read_text()  # tags stripped first, then unescaped: '&lt;0.001' is text, not a tag


def test_the_report_has_the_batch_loop_section(page: str) -> None:
    assert '<section id="preflight"><h2>Batch loop</h2>' in page


def test_the_section_draws_the_loop(page: str) -> None:
    assert 'id="figure-preflight"' in page


def test_the_section_says_what_preflight_says(config: Path, page: str) -> None:
    lead = headline(invoke("preflight", BIGMATH, "--config", config, "-f", "table").stdout)
    section = page[page.index('<section id="preflight">') :]
    text = html.unescape(re.sub(r"<[^>]+>", " ", section))  # the page writes '<0.001' as '&lt;0.001'
    assert " ".join(lead.split()) in " ".join(text.split())


def test_the_section_tables_preflight_s_row(config: Path, page: str) -> None:
    row = csv_of(invoke("preflight", BIGMATH, "--config", config, "-f", "csv"))
    section = re.sub(r"<[^>]+>", " ", page[page.index('<section id="preflight">') :])
    assert f"{row['min_safe_gen_batch_size'][0]:,}" in section


def test_the_loop_describes_one_input(config: Path, tmp_path: Path) -> None:
    result = invoke("report", BIGMATH, TOY, "--preflight-config", config, "-o", tmp_path / "r.html")
    assert 2 == result.exit_code


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sigmatool", *map(str, args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "No such file"),
        ("data: [\n", "none of the batch loop's keys"),
        ("model:\n  name: qwen\n", "none of the batch loop's keys"),
    ],
    ids=["missing", "not-a-config", "other-keys"],
)
@pytest.mark.parametrize("command", ["report", "preflight"])
def test_a_config_without_the_loop_is_one_line_and_exit_1(
    command: str, text: str | None, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "loop.yaml"
    if text is not None:
        path.write_text(text)
    args = (
        ["--preflight-config", path, "-o", tmp_path / "r.html"] if command == "report" else ["--config", path]
    )
    # One case of each command in a real process, the others in-process through the same entry point.
    done = _run(command, TOY, *args) if text is None else run_in(command, TOY, *args)
    errors = [line for line in done.stderr.splitlines() if not line.startswith("note:")]
    assert 1 == done.returncode, done.stderr
    assert 1 == len(errors), done.stderr
    assert message in errors[0]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("data:\n  train_batch_size: 256\n", "Without the filter"),  # verl's defaults: no dynamic sampling
        ("--rollout-batch-size 32\n--n-samples-per-prompt 8\n--num-rollout 50\n"
         "--dynamic-sampling-filter-path slime.rollout.filter_hub.dynamic_sampling_filters."
         "check_reward_nonzero_std\n", "slime's loop has no cap and never crashes"),
    ],
    ids=["plain-verl", "slime"],
)  # fmt: skip
def test_a_loop_with_no_crash_curve_has_its_section_without_a_figure(
    text: str, said: str, tmp_path: Path
) -> None:
    path = tmp_path / "loop.txt"
    path.write_text(text)
    result = invoke("report", TOY, "--preflight-config", path, "-o", tmp_path / "r.html")
    assert 0 == result.exit_code, result.stderr
    page = html.unescape((tmp_path / "r.html").read_text())
    section = page[page.index('<section id="preflight">') :]
    assert said in " ".join(re.sub(r"<[^>]+>", " ", section).split())
    assert 'id="figure-preflight"' not in page
