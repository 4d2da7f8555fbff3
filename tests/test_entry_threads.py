"""The console script runs OpenBLAS on one thread unless the user chose a number (sigmatool.entry)."""

from __future__ import annotations

from sigmatool import entry


def test_one_blas_thread_is_set_when_none_is_chosen() -> None:
    env: dict[str, str] = {}
    entry.single_threaded_blas(env)
    assert {entry.BLAS_THREADS: "1"} == env


def test_a_thread_count_the_user_chose_is_kept() -> None:
    env = {entry.BLAS_THREADS: "4"}
    entry.single_threaded_blas(env)
    assert {entry.BLAS_THREADS: "4"} == env
