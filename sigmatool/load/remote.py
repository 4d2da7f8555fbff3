"""Object-store inputs (``s3://``, ``gs://``, ``az://``, ``https://``): options, globs, errors, JSON arrays.

polars reads credentials, region and endpoint from the usual environment variables by itself
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``,
``AWS_ENDPOINT_URL``; ``AWS_ALLOW_HTTP`` for a plain-http endpoint), through boto3 when it is installed
and through its own object-store client otherwise. What it does not do is give up: a server that accepts
the connection and never answers kept ``sigmatool silent s3://…`` waiting for more than ten minutes.

:func:`storage_options` adds a time limit: ``SIGMATOOL_REMOTE_TIMEOUT`` seconds per try of a request
(default 60, from connecting to the last byte); retries stop once one limit has passed, so a silent server
ends a command after about twice the limit (measured: 5.6 s with a limit of 2 s, 12.5 s with 5 s, start-up
included). :func:`expand` lists the objects a glob matches, :func:`read_text` fetches a JSON array (the one
format polars scans only from local files), and :func:`describe_error` turns a polars or object-store error
into one line a person can act on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import polars as pl

from sigmatool.errors import DataError, UsageError

TIMEOUT_ENV = "SIGMATOOL_REMOTE_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
# A retry covers a dropped connection or a throttled request; object_store stops retrying once the retry
# timeout (set to one limit) has passed, so a silent server gets two tries.
MAX_RETRIES = 2
GLOB_CHARS = frozenset("*?[")
# The clients that take the time limits: S3, Google Cloud Storage, Azure, HTTP. Hugging Face's (hf://)
# refuses them ("unknown configuration key for HF: timeout") and is given none.
LIMITED_SCHEMES = frozenset(
    {"s3", "s3a", "gs", "gcs", "gcp", "az", "azure", "abfs", "abfss", "adl", "http", "https"}
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_ENDPOINT = re.compile(r"\b(?:GET|PUT|HEAD|POST) (https?://[^/\s]+)")
_CODE = re.compile(r"<Code>([^<]+)</Code>")


def is_remote(path: str) -> bool:
    """A URL with a scheme (s3://, gs://, az://, https://, ...) rather than a local path."""
    return _SCHEME.match(path) is not None


def has_glob(url: str) -> bool:
    """The object key holds a glob character (*, ? or [)."""
    return any(c in GLOB_CHARS for c in key(url))


def timeout_seconds(environ: Mapping[str, str] | None = None) -> float:
    """Seconds one request may take, from SIGMATOOL_REMOTE_TIMEOUT (default 60)."""
    env = os.environ if environ is None else environ
    text = env.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e6:
        raise UsageError(f"{TIMEOUT_ENV}={text!r}: give the seconds a request may take, e.g. 60")
    return value


def storage_options(environ: Mapping[str, str] | None = None) -> dict[str, str | int]:
    """What polars' scan_* must be given for a remote URL: the time limits (credentials it reads itself)."""
    seconds = timeout_seconds(environ)
    return {
        "timeout": f"{seconds:g}s",
        "connect_timeout": f"{min(seconds, 10.0):g}s",
        "max_retries": MAX_RETRIES,
        "retry_timeout_ms": int(seconds * 1000),
    }


def options_for(url: str, environ: Mapping[str, str] | None = None) -> dict[str, str | int] | None:
    """:func:`storage_options` for the URL's client, or None for a client that takes no time limits."""
    found = _SCHEME.match(url)
    scheme = found.group(1).lower() if found else ""
    return storage_options(environ) if scheme in LIMITED_SCHEMES else None


def expand(url: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """The objects a URL names, sorted: those a glob matches (one listing per folder), else the URL.

    When this polars cannot list objects, a glob comes back whole: scan it with ``glob=True``.
    """
    if url.endswith("/"):
        raise DataError(f"{url}: is a folder; give the files in it, e.g. '{url}*.parquet'")
    if not has_glob(url):
        return [url]
    found = _listing(url, environ)
    if found is None:
        return [url]
    if not found:
        raise DataError(f"{url}: no object matches this pattern")
    return found


def _listing(pattern: str, environ: Mapping[str, str] | None) -> list[str] | None:
    """Objects matching a glob, or None when this polars does not offer its listing."""
    try:
        # The listing polars' own scans use; a private module, hence the fallback.
        from polars.io._expand_paths import _expand_paths
    except ImportError:
        return None
    try:
        paths = _expand_paths(pattern, glob=True, storage_options=options_for(pattern, environ))
        return sorted(str(p) for p in paths.collect().to_series().to_list())
    except (OSError, pl.exceptions.PolarsError) as error:
        raise describe_error(error, pattern, environ) from error


def read_text(url: str, environ: Mapping[str, str] | None = None) -> str:
    """The whole object as text, fetched with polars' own client (credentials, time limits and all).

    polars reads a JSON array only from a local file; its CSV reader fetches any object. Read with a
    separator and no quote character, each line comes back whole: valid JSON never holds an unescaped
    control character such as the separator, so only a file that is not JSON could be split.
    """
    try:
        lines = pl.scan_csv(
            url,
            has_header=False,
            separator="\x1f",
            quote_char=None,
            infer_schema=False,
            storage_options=options_for(url, environ),
        ).collect()
    except (OSError, pl.exceptions.PolarsError) as error:
        if is_remote_error(error):
            raise describe_error(error, url, environ) from error
        raise
    if lines.width != 1:
        raise DataError(f"{url}: cannot read it as json: a line holds a control character (not JSON)")
    return "\n".join(lines.to_series().fill_null("").to_list())


def is_remote_error(error: BaseException) -> bool:
    """An error from the object store or the network, as opposed to one about the file's content."""
    return isinstance(error, OSError) or "object-store error" in str(error) or "CloudLocation" in str(error)


def describe_error(error: BaseException, url: str, environ: Mapping[str, str] | None = None) -> DataError:
    """One line naming the URL and what to do: missing bucket or object, credentials, time-out, network."""
    return DataError(f"{url}: {_reason(error, url, environ)}")


def _reason(error: BaseException, url: str, environ: Mapping[str, str] | None) -> str:
    text = str(error)
    found = _CODE.search(text)
    code = found.group(1) if found else ""
    endpoint = _endpoint(text, environ)
    if code == "NoSuchBucket":
        return f"no such bucket {_bucket(url)!r} at {endpoint}"
    if code == "InvalidAccessKeyId":
        return "the access key id is unknown to the server (check AWS_ACCESS_KEY_ID)"
    if code == "SignatureDoesNotMatch":
        return "the secret key does not match the access key (check AWS_SECRET_ACCESS_KEY)"
    if code in ("PermanentRedirect", "AuthorizationHeaderMalformed"):
        return f"bucket {_bucket(url)!r} is in another region (set AWS_REGION)"
    if code == "ExpiredToken":
        return "the session token has expired (renew AWS_SESSION_TOKEN)"
    if "could not extract bucket/key" in text:
        return "name an object in the bucket, e.g. s3://bucket/file.parquet"
    if "Missing AccessKeyId" in text or "169.254.169.254" in text:
        return "no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
    if isinstance(error, PermissionError) or code == "AccessDenied" or "403 Forbidden" in text:
        return "access denied (without list permission a missing object is denied too)"
    if isinstance(error, FileNotFoundError) or code == "NoSuchKey" or "404 Not Found" in text:
        return "no such object"
    if isinstance(error, TimeoutError) or "timed out" in text:
        limit = timeout_seconds(environ)
        return f"no answer from {endpoint} (each try was given {limit:g} s; {TIMEOUT_ENV} sets it)"
    if isinstance(error, ConnectionError) or "error sending request" in text or "dns error" in text:
        return f"cannot connect to {endpoint}"
    if "Range request not supported" in text:
        # A plain static server (python -m http.server, say) sends whole files only; object stores and the
        # usual file hosts answer ranges.
        return (
            "the server sends whole files only (no range requests), and inputs are read in place in ranges: "
            f"download it first (curl -fLO {url}) and give the local file"
        )
    return f"cannot read it: {_plain(text)}"


def _bucket(url: str) -> str:
    rest = _SCHEME.sub("", url)
    return rest.split("/", 1)[0]


def key(url: str) -> str:
    """The object key: the URL without its scheme and bucket."""
    rest = _SCHEME.sub("", url)
    return rest.split("/", 1)[1] if "/" in rest else ""


def _endpoint(text: str, environ: Mapping[str, str] | None) -> str:
    found = _ENDPOINT.search(text)
    if found:
        return found.group(1)
    env = os.environ if environ is None else environ
    return env.get("AWS_ENDPOINT_URL") or "the object store"


def _plain(text: str) -> str:
    """The first line of an error, without the server's XML body and polars' prefixes."""
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    line = line.split(": <?xml", 1)[0].split(" (path: ", 1)[0]
    for prefix in ("object-store error: ", "Generic S3 error: "):
        line = line.replace(prefix, "")
    return line.strip() or "unknown error"
