"""Inputs over plain HTTP(S), from a server on this machine: a JSON file read as the local file is, fetched
once a command, and a server that sends whole files only named in one line with what to do."""

from __future__ import annotations

import collections
import http.server
import io
import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import csv_of, invoke, one_error_line, run_cli

# Each shape of one JSON object a difficulty file comes as (docs/input.md, "One JSON object"), with grades
# of 8 answers so that every route reads them as counts of 8.
OBJECTS = {
    "ids_to_values": {f"q{i}": (i * 3 % 9) / 8 for i in range(40)},
    "ids_to_records": {f"q{i}": {"pass_rate": (i * 5 % 9) / 8} for i in range(40)},
    "columns": {"prompt": [f"q{i}" for i in range(40)], "pass_rate": [(i * 7 % 9) / 8 for i in range(40)]},
}


# Each path's GET requests to the server that answers ranges.
GETS: collections.Counter[str] = collections.Counter()


class Files(http.server.SimpleHTTPRequestHandler):
    """A static server that answers range requests, as object stores and file hosts do."""

    def send_head(self):  # type: ignore[no-untyped-def]
        path = Path(self.translate_path(self.path))
        asked = self.headers.get("Range")
        if self.command == "GET":
            GETS[self.path] += 1
        if not path.is_file() or not asked:
            return super().send_head()
        data = path.read_bytes()
        first, last = re.fullmatch(r"bytes=(\d+)-(\d*)", asked).groups()  # type: ignore[union-attr]
        start, end = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        return io.BytesIO(data[start : end + 1])

    def log_message(self, *args: object) -> None:
        pass


class WholeFiles(http.server.SimpleHTTPRequestHandler):
    """Python's own static server: whole files only."""

    def log_message(self, *args: object) -> None:
        pass


def _serve(handler: type[http.server.SimpleHTTPRequestHandler], folder: Path) -> Iterator[str]:
    class Here(handler):  # type: ignore[valid-type,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)  # type: ignore[arg-type]

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Here)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("http")
    for name, obj in OBJECTS.items():
        (here / f"{name}.json").write_text(json.dumps(obj))
    shutil.copy(Path(__file__).parent.parent / "sample_data" / "toy_pass_rates.csv", here)
    return here


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[str]:
    yield from _serve(Files, folder)


@pytest.mark.parametrize("name", list(OBJECTS))
def test_a_json_object_over_http_reads_as_the_local_file_does(server: str, folder: Path, name: str) -> None:
    local, url = folder / f"{name}.json", f"{server}/{name}.json"
    here, there = (invoke("silent", path, "--G", "4,8", "--format", "csv") for path in (local, url))
    assert csv_of(here).equals(csv_of(there))
    assert here.stderr.replace(str(local), "FILE") == there.stderr.replace(url, "FILE")
    assert "one JSON object" in there.stderr


def test_a_remote_json_file_is_fetched_once_a_command(server: str) -> None:
    from sigmatool.load import remote

    url = f"{server}/ids_to_values.json"
    GETS.clear()
    remote.read_text(url)
    one_read = GETS["/ids_to_values.json"]
    GETS.clear()
    csv_of(invoke("silent", url, "--G", "8", "--format", "csv"))
    assert one_read == GETS["/ids_to_values.json"]


def test_a_remote_json_file_is_read_again_by_the_next_command(server: str, folder: Path) -> None:
    url = f"{server}/changing.json"
    rates = []
    for value in (0.25, 0.75):
        (folder / "changing.json").write_text(json.dumps({f"q{i}": value for i in range(10)}))
        rates.append(csv_of(invoke("silent", url, "--G", "1", "--format", "csv"))["all_right_rate"][0])
    assert [0.25, 0.75] == rates


def test_a_server_that_sends_whole_files_only_is_named_in_one_line(folder: Path) -> None:
    for base in _serve(WholeFiles, folder):
        url = f"{base}/toy_pass_rates.csv"
        done = run_cli("silent", url, "--G", "8")
        assert 1 == done.returncode
        line = one_error_line(done.stderr)
        assert line.startswith(f"error: {url}: the server sends whole files only")
        assert f"curl -fLO {url}" in line
