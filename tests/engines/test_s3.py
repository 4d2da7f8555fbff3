"""Object stores for real: a moto S3 server in its own process, files uploaded with boto3, and sigmatool
run as a real process with credentials and endpoint in the usual environment variables."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool.errors import DataError
from sigmatool.load.remote import expand, storage_options
from tests.conftest import TOY, one_error_line
from tests.engines.conftest import ROLLOUTS, S3Server, bytes_requested, csv_out, log_files, sigmatool

BUCKET = "lake"
REWARD = [*ROLLOUTS, "--reward-col", "reward"]


@pytest.fixture(scope="module")
def lake(s3_server: S3Server, small_log: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """The bucket: the small rollout log under logs/, a pass-rate CSV, and a wide log with a large text
    column. Returns each key's size in bytes."""
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    sizes: dict[str, int] = {}

    def put(key: str, body: bytes) -> None:
        client.put_object(Bucket=BUCKET, Key=key, Body=body)
        sizes[key] = len(body)

    for path in sorted(small_log.glob("step=*/*.parquet")):
        put(f"logs/{path.parent.name}/{path.name}", path.read_bytes())
    put("rates/toy_pass_rates.csv", TOY.read_bytes())
    rates = pl.read_csv(TOY)
    put("json/toy_pass_rates.jsonl", rates.write_ndjson().encode())
    put("json/toy_pass_rates.json", rates.write_json().encode())
    put("wide/rollouts.parquet", _wide_log(tmp_path_factory.mktemp("wide") / "wide.parquet").read_bytes())
    return sizes


def _wide_log(path: Path) -> Path:
    """20,000 rollouts with their 1 kB completions, in several row groups, uncompressed."""
    rng = np.random.default_rng(7)
    rows = 20_000
    text = [rng.bytes(500).hex() for _ in range(rows)]
    frame = pl.DataFrame(
        {"prompt_id": rng.integers(0, 800, rows), "reward": rng.integers(0, 2, rows), "completion": text}
    )
    frame.write_parquet(path, compression="uncompressed", row_group_size=5_000)
    return path


def without_boto3(tmp_path: Path) -> str:
    """A PYTHONPATH on which `import boto3` fails, as on a machine without it: polars then uses its own
    object-store client and reads the environment itself."""
    fake = tmp_path / "no-boto3" / "boto3"
    fake.mkdir(parents=True, exist_ok=True)
    (fake / "__init__.py").write_text("raise ImportError('boto3 is not installed here')\n")
    return str(fake.parent)


@pytest.fixture(params=["boto3", "object-store"])
def env(request: pytest.FixtureRequest, s3_server: S3Server, tmp_path: Path) -> dict[str, str]:
    """The user's environment, with polars reaching S3 through boto3 or through its own client."""
    if request.param == "boto3":
        return s3_server.env()
    return s3_server.env(PYTHONPATH=without_boto3(tmp_path))


# ------------------------------------------------------------------------------------------ the commands


def test_rollouts_from_one_object_print_what_the_local_file_prints(
    lake: dict[str, int], small_log: Path, env: dict[str, str]
) -> None:
    local = next(iter(sorted(small_log.glob("step=0/*.parquet"))))
    remote = f"s3://{BUCKET}/logs/step=0/{local.name}"
    assert csv_out("silent", local, *REWARD) == csv_out("silent", remote, *REWARD, env=env)


def test_pass_rates_from_a_csv_object_print_what_the_local_file_prints(
    lake: dict[str, int], env: dict[str, str]
) -> None:
    remote = f"s3://{BUCKET}/rates/toy_pass_rates.csv"
    assert csv_out("budget", TOY) == csv_out("budget", remote, env=env)


def test_pass_rates_from_a_json_lines_object_print_what_the_local_file_prints(
    lake: dict[str, int], env: dict[str, str]
) -> None:
    remote = f"s3://{BUCKET}/json/toy_pass_rates.jsonl"
    assert csv_out("budget", TOY) == csv_out("budget", remote, env=env)


def test_duckdb_engine_on_an_object_counts_it_or_names_its_extension(
    lake: dict[str, int], small_log: Path, s3_server: S3Server
) -> None:
    """DuckDB reads s3:// through its httpfs extension, which it would download on first use: without it
    (as on a machine with no network) one line says so; with it, the output is the local file's."""
    local = next(iter(sorted(small_log.glob("step=0/*.parquet"))))
    remote = f"s3://{BUCKET}/logs/step=0/{local.name}"
    done = sigmatool("silent", remote, *REWARD, "--engine", "duckdb", "--format", "csv", env=s3_server.env())
    if done.returncode == 2:
        assert "httpfs" in one_error_line(done.stderr)
        assert done.stderr.strip() == one_error_line(done.stderr)
    else:
        assert (0, csv_out("silent", local, *REWARD)) == (done.returncode, done.stdout)


def test_only_the_needed_columns_are_read(lake: dict[str, int], s3_server: S3Server, tmp_path: Path) -> None:
    key = "wide/rollouts.parquet"
    s3_server.start_recording()
    out = csv_out("silent", f"s3://{BUCKET}/{key}", *REWARD, env=s3_server.env())
    requested = bytes_requested(s3_server.recorded(), lake)
    # The footer read (at most 256 KiB) and two small columns, never the 20 MB of completions.
    assert requested < lake[key] // 20
    assert "silent_rate" in out


@pytest.mark.parametrize(
    ("case", "url", "changes"),
    [
        ("missing bucket", "s3://no-such-bucket/logs/part.parquet", {}),
        ("missing key", f"s3://{BUCKET}/logs/no-such-file.parquet", {}),
        ("bad secret", f"s3://{BUCKET}/wide/rollouts.parquet", {"AWS_SECRET_ACCESS_KEY": "wrong"}),
        (
            "unknown key id",
            f"s3://{BUCKET}/wide/rollouts.parquet",
            {"AWS_ACCESS_KEY_ID": "AKIAUNKNOWN000000000"},
        ),
    ],
)
def test_a_failed_read_is_one_line_and_exit_1(
    lake: dict[str, int], env: dict[str, str], case: str, url: str, changes: dict[str, str]
) -> None:
    env = {**env, **changes}
    started = time.monotonic()
    done = sigmatool("silent", url, *REWARD, env=env, timeout=60)
    assert 1 == done.returncode, case
    assert 1 == len(done.stderr.strip().splitlines()), done.stderr
    assert done.stderr.strip() == one_error_line(done.stderr)
    assert time.monotonic() - started < 30


def test_a_refused_connection_is_one_line_and_exit_1(lake: dict[str, int], s3_server: S3Server) -> None:
    # Retried within the time limit; one credential route is enough.
    env = s3_server.env(AWS_ENDPOINT_URL="http://127.0.0.1:9")
    done = sigmatool("silent", f"s3://{BUCKET}/wide/rollouts.parquet", *REWARD, env=env, timeout=60)
    assert 1 == done.returncode
    assert "cannot connect to http://127.0.0.1:9" in one_error_line(done.stderr)


def test_missing_credentials_are_one_line_and_exit_1(lake: dict[str, int], s3_server: S3Server) -> None:
    # Nowhere to look up credentials: no keys, no metadata service (a closed local port instead).
    env = s3_server.env(
        AWS_ACCESS_KEY_ID=None,
        AWS_SECRET_ACCESS_KEY=None,
        AWS_EC2_METADATA_DISABLED="true",
        AWS_METADATA_ENDPOINT="http://127.0.0.1:9",
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_CONFIG_FILE=os.devnull,
    )
    done = sigmatool("silent", f"s3://{BUCKET}/wide/rollouts.parquet", *REWARD, env=env, timeout=60)
    assert 1 == done.returncode
    assert done.stderr.strip() == one_error_line(done.stderr)


# ------------------------------------------------------------------------------------------ sigmatool.remote


@pytest.fixture
def aws_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's environment points at the server: polars reads it for every new client."""
    for key, value in s3_server.env().items():
        if key.startswith("AWS_"):
            monkeypatch.setenv(key, value)


def remote_error(url: str, env: dict[str, str], read: str = "parquet") -> str:
    """describe_error's line for a read of `url` in a fresh process (polars keeps clients per process)."""
    code = (
        "import sys, polars as pl\n"
        "from sigmatool.load.remote import describe_error, storage_options\n"
        f"scan = pl.scan_{read}\n"
        "try:\n"
        "    scan(sys.argv[1], storage_options=storage_options()).collect_schema()\n"
        "except Exception as error:\n"
        "    print(describe_error(error, sys.argv[1]))\n"
        "else:\n"
        "    print('read')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, url],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_expand_lists_the_objects_a_glob_matches(
    lake: dict[str, int], s3_server: S3Server, aws_env: None
) -> None:
    expected = sorted(f"s3://{BUCKET}/{key}" for key in lake if key.startswith("logs/step=1/"))
    assert expected == expand(f"s3://{BUCKET}/logs/step=1/*.parquet")


def test_expand_goes_down_folders_with_two_stars(
    lake: dict[str, int], s3_server: S3Server, aws_env: None
) -> None:
    expected = sorted(f"s3://{BUCKET}/{key}" for key in lake if key.startswith("logs/"))
    assert expected == expand(f"s3://{BUCKET}/logs/**/*.parquet")


def test_expand_leaves_a_plain_key_alone(s3_server: S3Server, aws_env: None) -> None:
    url = f"s3://{BUCKET}/anything.parquet"
    assert [url] == expand(url)


def test_expand_with_no_match_is_a_data_error(
    lake: dict[str, int], s3_server: S3Server, aws_env: None
) -> None:
    with pytest.raises(DataError, match="no object matches"):
        expand(f"s3://{BUCKET}/logs/*.csv")


def test_expand_in_a_missing_bucket_names_the_bucket(s3_server: S3Server, aws_env: None) -> None:
    with pytest.raises(DataError, match="no such bucket 'nothere'"):
        expand("s3://nothere/logs/*.parquet")


def test_storage_options_read_what_the_local_file_holds(lake: dict[str, int], s3_server: S3Server) -> None:
    env = s3_server.env(PYTHONPATH=None)
    code = (
        "import sys, polars as pl\n"
        "from sigmatool.load.remote import storage_options\n"
        "pl.scan_csv(sys.argv[1], storage_options=storage_options()).collect().write_csv(sys.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, f"s3://{BUCKET}/rates/toy_pass_rates.csv"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert pl.read_csv(TOY).equals(pl.read_csv(io.StringIO(done.stdout)))


@pytest.mark.parametrize(
    ("url", "changes", "expected"),
    [
        (
            "s3://nothere/x.parquet",
            {},
            "s3://nothere/x.parquet: no such bucket 'nothere' at http://127.0.0.1:",
        ),
        (f"s3://{BUCKET}/x.parquet", {}, f"s3://{BUCKET}/x.parquet: no such object"),
        (
            f"s3://{BUCKET}/wide/rollouts.parquet",
            {"AWS_SECRET_ACCESS_KEY": "wrong"},
            "the secret key does not match the access key (check AWS_SECRET_ACCESS_KEY)",
        ),
        (
            f"s3://{BUCKET}/wide/rollouts.parquet",
            {"AWS_ACCESS_KEY_ID": "AKIAUNKNOWN000000000"},
            "the access key id is unknown to the server (check AWS_ACCESS_KEY_ID)",
        ),
        (
            f"s3://{BUCKET}/wide/rollouts.parquet",
            {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"},
            "cannot connect to",
        ),
    ],
)
def test_describe_error_names_the_problem(
    lake: dict[str, int],
    s3_server: S3Server,
    tmp_path: Path,
    url: str,
    changes: dict[str, str],
    expected: str,
) -> None:
    # polars' own client, as on a machine without boto3; the boto3 route is checked through the CLI above.
    env = s3_server.env(PYTHONPATH=without_boto3(tmp_path), **changes)
    assert expected in remote_error(url, env)


def test_describe_error_for_missing_credentials(
    lake: dict[str, int], s3_server: S3Server, tmp_path: Path
) -> None:
    env = s3_server.env(
        AWS_ACCESS_KEY_ID=None,
        AWS_SECRET_ACCESS_KEY=None,
        AWS_METADATA_ENDPOINT="http://127.0.0.1:9",
        PYTHONPATH=without_boto3(tmp_path),
    )
    line = remote_error(f"s3://{BUCKET}/wide/rollouts.parquet", env)
    assert "no credentials found" in line or "cannot connect to" in line


def test_a_silent_server_times_out_within_the_stated_limit(s3_server: S3Server, silent_server: str) -> None:
    env = s3_server.env(AWS_ENDPOINT_URL=silent_server, SIGMATOOL_REMOTE_TIMEOUT="1")
    started = time.monotonic()
    line = remote_error(f"s3://{BUCKET}/wide/rollouts.parquet", env)
    elapsed = time.monotonic() - started
    assert f"no answer from {silent_server} (each try was given 1 s;" in line
    # Two tries of one second, plus starting Python.
    assert elapsed < 10


def test_storage_options_carry_the_limit_from_the_environment() -> None:
    assert "5s" == storage_options({"SIGMATOOL_REMOTE_TIMEOUT": "5"})["timeout"]


# ------------------------------------------------------------------------------------------ globs, time limits, JSON arrays, objects gone


def test_a_glob_of_objects_prints_what_the_local_glob_prints(
    lake: dict[str, int], small_log: Path, env: dict[str, str]
) -> None:
    remote = f"s3://{BUCKET}/logs/step=*/*.parquet"
    assert csv_out("silent", log_files(small_log), *REWARD) == csv_out("silent", remote, *REWARD, env=env)


def test_the_step_folders_of_objects_are_a_by_column(
    lake: dict[str, int], small_log: Path, env: dict[str, str]
) -> None:
    remote = f"s3://{BUCKET}/logs/step=*/*.parquet"
    by_step = [*REWARD, "--by", "step"]
    assert csv_out("budget", log_files(small_log), *by_step) == csv_out("budget", remote, *by_step, env=env)


def test_json_lines_whose_types_polars_cannot_unify_are_one_line(
    lake: dict[str, int], s3_server: S3Server
) -> None:
    body = b'{"pass_rate": 0.5, "tags": [1]}\n{"pass_rate": 0.25, "tags": 3}\n'
    s3_server.client().put_object(Bucket=BUCKET, Key="json/mixed.jsonl", Body=body)
    done = sigmatool("budget", f"s3://{BUCKET}/json/mixed.jsonl", env=s3_server.env())
    assert 1 == done.returncode
    assert f"s3://{BUCKET}/json/mixed.jsonl: cannot read it as jsonl" in one_error_line(done.stderr)


def test_a_glob_of_csv_objects_is_read(lake: dict[str, int], env: dict[str, str]) -> None:
    assert csv_out("budget", TOY) == csv_out("budget", f"s3://{BUCKET}/rates/*.csv", env=env)


@pytest.mark.parametrize(
    ("url", "changes", "expected"),
    [
        ("s3://nothere/x.parquet", {}, "error: s3://nothere/x.parquet: no such bucket 'nothere'"),
        (f"s3://{BUCKET}/x.parquet", {}, f"error: s3://{BUCKET}/x.parquet: no such object"),
        (f"s3://{BUCKET}/wide/rollouts.parquet", {"AWS_SECRET_ACCESS_KEY": "wrong"}, "AWS_SECRET_ACCESS_KEY"),
        (f"s3://{BUCKET}/logs/*.csv", {}, "no object matches this pattern"),
    ],
)
def test_a_failed_read_says_what_to_fix(
    lake: dict[str, int], env: dict[str, str], url: str, changes: dict[str, str], expected: str
) -> None:
    done = sigmatool("silent", url, *REWARD, env={**env, **changes}, timeout=60)
    assert 1 == done.returncode
    assert expected in done.stderr


def test_a_silent_server_ends_the_command_within_the_limit(s3_server: S3Server, silent_server: str) -> None:
    env = s3_server.env(AWS_ENDPOINT_URL=silent_server, SIGMATOOL_REMOTE_TIMEOUT="2")
    started = time.monotonic()
    done = sigmatool("silent", f"s3://{BUCKET}/wide/rollouts.parquet", *REWARD, env=env, timeout=60)
    assert 1 == done.returncode
    assert "no answer from" in done.stderr
    assert time.monotonic() - started < 15


def test_pass_rates_from_a_json_array_object_are_read(lake: dict[str, int], env: dict[str, str]) -> None:
    assert csv_out("budget", TOY) == csv_out("budget", f"s3://{BUCKET}/json/toy_pass_rates.json", env=env)


def test_an_object_gone_before_the_pass_is_a_data_error(
    lake: dict[str, int], s3_server: S3Server, aws_env: None
) -> None:
    from sigmatool.load import dataset, histogram
    from sigmatool.options import InputOptions

    client = s3_server.client()
    client.copy_object(
        Bucket=BUCKET, Key="gone.parquet", CopySource={"Bucket": BUCKET, "Key": "wide/rollouts.parquet"}
    )
    options = InputOptions(
        paths=(f"s3://{BUCKET}/gone.parquet",), rollouts=True, prompt_col="prompt_id", reward_col="reward"
    )
    with dataset(options) as ds:
        client.delete_object(Bucket=BUCKET, Key="gone.parquet")
        with pytest.raises(DataError, match="no such object"):
            histogram(ds)
