"""sigmatool.load.remote without a server: which paths are remote, the time limit, and how errors read.
Against a real S3 protocol server: tests/engines/test_s3.py."""

from __future__ import annotations

import pytest

from sigmatool.errors import DataError, UsageError
from sigmatool.load.remote import (
    DEFAULT_TIMEOUT,
    describe_error,
    expand,
    has_glob,
    is_remote,
    is_remote_error,
    options_for,
    storage_options,
    timeout_seconds,
)


@pytest.mark.parametrize("path", ["s3://b/k.parquet", "gs://b/k.csv", "az://c/k", "https://host/k.csv"])
def test_urls_are_remote(path: str) -> None:
    assert is_remote(path)


@pytest.mark.parametrize("path", ["logs/a.parquet", "/abs/a.csv", "C:\\data\\a.csv", "-", "weird:name.csv"])
def test_local_paths_are_not_remote(path: str) -> None:
    assert not is_remote(path)


@pytest.mark.parametrize(
    ("url", "glob"),
    [
        ("s3://b/*.parquet", True),
        ("s3://b/p?rt.csv", True),
        ("s3://b/[ab].csv", True),
        ("s3://b/k.csv", False),
    ],
)
def test_glob_characters_are_found_in_the_key(url: str, glob: bool) -> None:
    assert glob == has_glob(url)


def test_timeout_defaults_to_a_minute() -> None:
    assert DEFAULT_TIMEOUT == timeout_seconds({})


def test_timeout_comes_from_the_environment() -> None:
    assert 2.5 == timeout_seconds({"SIGMATOOL_REMOTE_TIMEOUT": "2.5"})


@pytest.mark.parametrize("text", ["soon", "0", "-3", "nan", "inf"])
def test_a_bad_timeout_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="SIGMATOOL_REMOTE_TIMEOUT"):
        timeout_seconds({"SIGMATOOL_REMOTE_TIMEOUT": text})


def test_storage_options_bound_each_request_and_the_retries() -> None:
    options = storage_options({"SIGMATOOL_REMOTE_TIMEOUT": "30"})
    assert {
        "timeout": "30s",
        "connect_timeout": "10s",
        "max_retries": 2,
        "retry_timeout_ms": 30_000,
    } == options


def test_storage_options_pass_no_credentials() -> None:
    # polars reads AWS_* from the process environment itself; passing them would bypass its providers.
    options = storage_options({"AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret"})
    assert not [key for key in options if "aws" in key or "key" in key]


def test_expand_leaves_a_plain_url_alone_without_asking_the_store() -> None:
    assert ["s3://bucket/logs/a.parquet"] == expand("s3://bucket/logs/a.parquet")


def test_expand_of_a_folder_asks_for_its_files() -> None:
    with pytest.raises(DataError, match=r"is a folder; give the files in it, e.g. 's3://b/logs/\*.parquet'"):
        expand("s3://b/logs/")


def test_a_missing_object_error_becomes_one_line() -> None:
    error = FileNotFoundError("object-store error: Object at location k.csv not found: <?xml\n<Error/>")
    assert "s3://b/k.csv: no such object" == str(describe_error(error, "s3://b/k.csv"))


def test_a_time_out_names_the_endpoint_and_the_limit() -> None:
    error = TimeoutError(
        "Error performing GET http://10.0.0.1:9000/b/k in 60s\n\nCaused by: operation timed out"
    )
    expected = "s3://b/k: no answer from http://10.0.0.1:9000 (each try was given 7 s; SIGMATOOL_REMOTE_TIMEOUT sets it)"
    assert expected == str(describe_error(error, "s3://b/k", {"SIGMATOOL_REMOTE_TIMEOUT": "7"}))


def test_an_unknown_error_keeps_its_first_line_without_the_servers_xml() -> None:
    error = OSError('object-store error: Generic S3 error: boom: <?xml version="1.0"?>\n<Error>…</Error>')
    assert "s3://b/k: cannot read it: boom" == str(describe_error(error, "s3://b/k"))


def test_a_bucket_without_a_key_asks_for_an_object() -> None:
    error = OSError("failed to create CloudLocation: could not extract bucket/key (path did not contain '/')")
    assert "name an object in the bucket" in str(describe_error(error, "s3://bucket"))


def test_a_parse_error_is_not_a_remote_error() -> None:
    assert not is_remote_error(ValueError("could not parse 'x' as dtype i64"))


@pytest.mark.parametrize("url", ["s3://b/k", "gs://b/k", "az://c/k", "https://host/k.csv"])
def test_object_store_clients_get_the_time_limits(url: str) -> None:
    assert storage_options({}) == options_for(url, {})


def test_the_hugging_face_client_gets_no_options() -> None:
    # polars refuses them: "unknown configuration key for HF: timeout".
    assert options_for("hf://datasets/org/name/train.parquet", {}) is None
