"""Peak memory of counting a large trainer dump: write one, then count it in a fresh process.

    python bench/trainers_memory.py verl 800     # a verl {step}.jsonl of about 800 MB
    python bench/trainers_memory.py nemo-rl 800  # a NeMo-RL train_data_step1.jsonl of about 800 MB

Prints the file size, the rollouts, the seconds and the peak resident memory of the counting process.
The dump has long answers (verl) or long token arrays (NeMo-RL), as real dumps do; 16 rollouts a prompt.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ANSWER = 6_000  # characters of a verl answer
TOKENS = 1_500  # tokens of a NeMo-RL rollout


def verl_row(rng: random.Random, prompt: int) -> str:
    right = rng.random() < 0.4
    row = {
        "input": f"user\nProblem {prompt}: " + "find x. " * 60 + "\nassistant\n",
        "output": "".join(rng.choice("abcdefgh ") for _ in range(64)) * (ANSWER // 64),
        "gts": str(prompt % 97),
        "score": 1.0 if right else -1.0,
        "step": 1,
        "acc": right,
        "pred": str(rng.randint(0, 99)),
    }
    return json.dumps(row, ensure_ascii=False)


def nemo_row(rng: random.Random, prompt: int, index: int) -> str:
    right = rng.random() < 0.4
    ids = [rng.randint(1, 150_000) for _ in range(64)] * (TOKENS // 64)
    row = {
        "content": [
            [f"Problem {prompt}: " + "find x. " * 60, "".join(rng.choice("abc ") for _ in range(2000))]
        ],
        "rewards": [1.0 if right else 0.0],
        "input_lengths": [len(ids)],
        "token_ids": [ids],
        "token_loss_mask": [[0] * 400 + [1] * (len(ids) - 400)],
        "sample_loss_mask": [1.0],
        "advantages": [[0.25] * len(ids)],
        "generation_logprobs": [[-0.125] * len(ids)],
        "prev_logprobs": [[-0.125] * len(ids)],
        "idx": index,
    }
    return json.dumps(row)


def write(trainer: str, folder: Path, megabytes: int) -> Path:
    rng = random.Random(0)
    path = folder / ("1.jsonl" if trainer == "verl" else "train_data_step1.jsonl")
    # Rows repeat a few templates so that writing is fast; the reader parses each row all the same.
    templates = (
        [verl_row(rng, p) for p in range(4)] if trainer == "verl" else [nemo_row(rng, p, 0) for p in range(4)]
    )
    written, index = 0, 0
    with path.open("w") as handle:
        while written < megabytes * 1_000_000:
            prompt = index // 16
            line = templates[index % 4].replace("Problem ", f"Problem {prompt}-", 1) + "\n"
            handle.write(line)
            written += len(line)
            index += 1
    return path


# Peak RSS counts the pages of the file that the reader maps into memory; those are page cache that the
# kernel can drop, not memory the process holds. So the anonymous part (RssAnon) is sampled separately.
COUNT = """
import resource, sys, threading, time
from sigmatool.trainers.dumps import find_dump_files, rollout_counts, scan_trainer
peak_anon = 0
def sample():
    global peak_anon
    while True:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    peak_anon = max(peak_anon, int(line.split()[1]) // 1024)
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
start = time.perf_counter()
log = scan_trainer(sys.argv[1], find_dump_files(sys.argv[1], [sys.argv[2]]))
out = rollout_counts(log)
time.sleep(0.05)
print(int(out["rows"].sum()), out.height, round(time.perf_counter() - start, 1),
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, peak_anon)
"""


def main() -> None:
    trainer, megabytes = sys.argv[1], int(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        path = write(trainer, Path(tmp), megabytes)
        size = path.stat().st_size / 1e6
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", COUNT, trainer, tmp], capture_output=True, text=True, check=True
        )
        rows, prompts, seconds, peak, anon = result.stdout.split()
        print(
            f"{trainer}: {size:,.0f} MB, {int(rows):,} rollouts, {int(prompts):,} prompts, "
            f"{float(seconds):.1f} s, peak RSS {int(peak):,} MB, peak anonymous RSS {int(anon):,} MB "
            f"(process {time.perf_counter() - started:.1f} s; this process "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB)"
        )


if __name__ == "__main__":
    main()
