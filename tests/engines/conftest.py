"""Real engines for `make test-engines`: a local Spark, DuckDB, and an S3 protocol server (moto).

Also the rollout logs they read: parquet files in Hive-style ``step=N`` folders, as Spark and most
trainers' loggers write them, generated with numpy and pyarrow.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import run_cli

BIN = Path(sys.executable).parent
JAVA_HINT = "Spark needs Java 17: run `apt-get install -y openjdk-17-jre-headless` (as root)"
CLI_TIMEOUT = 120
SOURCES = np.array(["gsm8k", "math", "olympiad"])


def pytest_configure(config: pytest.Config) -> None:
    # Warnings raised inside the engines' own client libraries, not by sigmatool.
    for line in (
        "ignore:PySpark does not yet fully support pandas:FutureWarning",
        "ignore::DeprecationWarning:botocore.*",
        "ignore::DeprecationWarning:pyspark.*",
    ):
        config.addinivalue_line("filterwarnings", line)


# ------------------------------------------------------------------------------------------ logs


def write_log(
    folder: Path,
    *,
    steps: int,
    prompts_per_step: int,
    rollouts: int,
    files_per_step: int,
    seed: int,
    pool: int | None = None,
    null_share: float = 0.02,
) -> Path:
    """A rollout log in ``folder/step=N/part-i.parquet``: each step draws prompts from a pool (so a prompt
    recurs across steps) and ``rollouts`` answers each; columns prompt_id, source, reward (0/1 with some
    nulls), score (a graded reward in [0, 1]). The step is in the folder name only, as Spark writes it."""
    rng = np.random.default_rng(seed)
    pool = pool or prompts_per_step * 2
    difficulty = rng.beta(0.6, 0.9, pool)
    difficulty[: pool // 20] = 0.0
    for step in range(steps):
        drawn = rng.choice(pool, size=prompts_per_step, replace=False)
        prompt = np.repeat(drawn, rollouts)
        p = np.clip(difficulty[prompt] + 0.02 * step, 0.0, 1.0)
        reward = (rng.random(prompt.size) < p).astype(np.float64)
        null = rng.random(prompt.size) < null_share
        score = np.clip(p + rng.normal(0.0, 0.25, prompt.size), 0.0, 1.0)
        order = rng.permutation(prompt.size)
        table = pa.table(
            {
                "prompt_id": pa.array(prompt[order]),
                "source": pa.array(SOURCES[prompt[order] % 3]),
                "reward": pa.array(reward[order], mask=null[order]),
                "score": pa.array(score[order]),
            }
        )
        part = folder / f"step={step}"
        part.mkdir(parents=True, exist_ok=True)
        bounds = np.linspace(0, table.num_rows, files_per_step + 1).astype(int)
        for i, (start, end) in enumerate(itertools.pairwise(bounds)):
            pq.write_table(table.slice(start, end - start), part / f"part-{i}.parquet")
    return folder


# ------------------------------------------------------------------------------------------ the CLI


def sigmatool(
    *args: object, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run sigmatool as a real process (tests.conftest.run_cli), in exactly the environment ``env`` if given."""
    if env is None:
        return run_cli(*args, timeout=timeout)
    removed: dict[str, str | None] = {name: None for name in os.environ if name not in env}
    return run_cli(*args, env={**removed, **env}, timeout=timeout)


def printed_query(dialect: str, **options: Any) -> str:
    """The query `sigmatool sql` prints (a real process) for the log registered as ``rollouts``.

    ``options``: reward_col, threshold, by (a list), step_col, as the command's options.
    """
    args: list[object] = ["sql", "--dialect", dialect, "--table", "rollouts", "--prompt-col", "prompt_id"]
    for name, value in options.items():
        for one in value if isinstance(value, list) else [value]:
            args += ["--" + name.replace("_", "-"), one]
    done = sigmatool(*args)
    assert 0 == done.returncode, done.stderr
    return done.stdout


_printed: dict[tuple[str, ...], str] = {}


def csv_out(*args: object, env: dict[str, str] | None = None) -> str:
    """The CSV a successful command prints; a local run is made once per session (the files do not change),
    so that the engines' tests share each `--rollouts` reference run."""
    key = tuple(str(a) for a in args)
    if env is None and key in _printed:
        return _printed[key]
    done = sigmatool(*args, "--format", "csv", env=env)
    assert 0 == done.returncode, done.stderr
    if env is None:
        _printed[key] = done.stdout
    return done.stdout


# ------------------------------------------------------------------------------------------ Spark


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local SparkSession on both cores."""
    if shutil.which("java") is None:
        pytest.skip(JAVA_HINT)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("sigmatool-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# ------------------------------------------------------------------------------------------ S3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class S3Server:
    """A moto server in its own process, with one IAM user whose keys reach every bucket."""

    url: str
    access_key: str
    secret_key: str
    process: subprocess.Popen[bytes]

    def env(self, **changes: str | None) -> dict[str, str]:
        """The process environment a user of this server has: keys, endpoint, region, plain http."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ACCESS_KEY_ID=self.access_key,
            AWS_SECRET_ACCESS_KEY=self.secret_key,
            AWS_ENDPOINT_URL=self.url,
            AWS_REGION="us-east-1",
            AWS_ALLOW_HTTP="true",
        )
        for key, value in changes.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
        )

    def _post(self, path: str) -> None:
        request = urllib.request.Request(self.url + path, method="POST", data=b"")
        urllib.request.urlopen(request, timeout=10).close()

    def start_recording(self) -> None:
        self._post("/moto-api/recorder/reset-recording")
        self._post("/moto-api/recorder/start-recording")

    def recorded(self) -> list[dict[str, Any]]:
        """Requests since start_recording: method, url, headers."""
        self._post("/moto-api/recorder/stop-recording")
        with urllib.request.urlopen(self.url + "/moto-api/recorder/download-recording", timeout=10) as r:
            return [json.loads(line) for line in r.read().decode().splitlines() if line.strip()]


def bytes_requested(requests: Sequence[dict[str, Any]], sizes: dict[str, int]) -> int:
    """Bytes the GET requests asked for: each Range header's length, or the whole object without one."""
    total = 0
    for request in requests:
        if request["method"] != "GET" or "list-type" in request["url"]:
            continue
        headers = {k.lower(): v for k, v in request["headers"].items()}
        key = request["url"].split("?", 1)[0].split("/", 3)[3]
        size = sizes[key.split("/", 1)[1]]
        if "range" not in headers:
            total += size
            continue
        start, _, end = headers["range"].removeprefix("bytes=").partition("-")
        total += min(int(end), size - 1) - int(start) + 1 if start else min(int(end), size)
    return total


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with {process.returncode}")
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("moto server did not start within 30 s")


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """moto on a free loopback port; it checks signatures after the three requests that create the user."""
    import boto3

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
    env["MOTO_RECORDER_FILEPATH"] = str(log.with_name("recording.jsonl"))
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
    try:
        _wait_until_up(url, process)
        iam = boto3.client(
            "iam",
            endpoint_url=url,
            aws_access_key_id="setup",
            aws_secret_access_key="setup",
            region_name="us-east-1",
        )
        iam.create_user(UserName="trainer")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="trainer", PolicyName="all", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="trainer")["AccessKey"]
        yield S3Server(url, key["AccessKeyId"], key["SecretAccessKey"], process)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An endpoint that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


# ------------------------------------------------------------------------------------------ shared logs

SMALL_LOG = {"steps": 3, "prompts_per_step": 400, "rollouts": 8, "files_per_step": 3, "seed": 20260612}
# 10 steps × 31,250 prompts × 32 rollouts = 10^7 rows.
BIG_LOG = {"steps": 10, "prompts_per_step": 31_250, "rollouts": 32, "files_per_step": 2, "seed": 20260613}
BIG_ROWS = 10_000_000
ROLLOUTS = ["--rollouts", "--prompt-col", "prompt_id"]
COMMANDS = {
    "silent": ["silent", "--G", "4,8,16"],
    "budget": ["budget", "--G", "4,8,16,inf"],
    "groupsize": ["groupsize", "--fidelity", "0.95"],
}


@pytest.fixture(scope="session")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("small") / "rollouts", **SMALL_LOG)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("big") / "rollouts", **BIG_LOG)  # type: ignore[arg-type]


def log_files(log: Path, step: int | None = None) -> str:
    """The glob a user gives sigmatool for the whole log or one step."""
    return str(log / ("step=*" if step is None else f"step={step}") / "*.parquet")
