"""Reading a trainer's launch script or file into its keys: the scalars of its YAML and arguments, a
script's ``--key value`` arguments (open-instruct, OpenRLHF), its Hydra ``key=value`` overrides with the
shell's variables expanded (a Pilot-Commit or verl recipe), and prime-rl's TOML. Nothing here imports polars
or numpy, nor :mod:`sigmatool.trainers.settings` (which reads files through it)."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sigmatool.errors import DataError

Scalar = str | int | float | bool | None
INTERPOLATION = re.compile(r"\$\{([^}]*)\}")
OVERRIDE = re.compile(r"^\+{0,2}[A-Za-z_][\w.-]*=")


def scalar(text: str) -> Scalar:
    """A YAML scalar as verl's configs write them: null, booleans, integers, floats, quoted or bare strings."""
    text = text.strip()
    if text in ("", "null", "~", "None"):
        return None
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text.replace("_", ""))
        except ValueError:
            pass
    return text


def uncomment(line: str) -> str:
    """The line without a ``#`` comment (one outside quotes)."""
    quote = ""
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in ("", ch):
            quote = "" if quote else ch
        elif ch == "#" and not quote and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def script_arguments(text: str) -> dict[str, Scalar]:
    """A launch script's ``--key value …`` arguments (open-instruct's grpo_fast.py, OpenRLHF's
    train_ppo_ray): a flag alone is True, several values are kept as one string (``--range 0 1``: "0 1").

    >>> script_arguments("python grpo_fast.py\\n  --total_episodes 10000000 --active_sampling\\n  --r 0 1")
    {'total_episodes': 10000000, 'active_sampling': True, 'r': '0 1'}
    """
    out: dict[str, Scalar] = {}
    tokens = [t for line in text.splitlines() for t in uncomment(line).replace("\\", " ").split()]
    for i, token in enumerate(tokens):
        if not token.startswith("--") or len(token) < 3:
            continue
        key, eq, value = token[2:].partition("=")
        if eq:
            out[key] = scalar(value.strip("'\""))
            continue
        values = []
        for following in tokens[i + 1 :]:
            if following.startswith("--") or following in ("(", ")", "&&", "\\&\\&"):
                break
            values.append(following.strip("'\""))
        out[key] = True if not values else scalar(values[0]) if len(values) == 1 else " ".join(values)
    return out


SHELL_SET = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=(.*)$")
SHELL_REF = re.compile(r"\$\{([A-Za-z_]\w*)(?::-([^}]*))?\}|\$([A-Za-z_]\w*)")
ARITHMETIC = re.compile(r"\$\(\(([^()]*(?:\([^()]*\)[^()]*)*)\)\)")


def _expanded(value: str, env: Mapping[str, str]) -> str:
    """A shell word with its ``${VAR}``, ``${VAR:-default}``, ``$VAR`` and ``$((arithmetic))`` expanded
    from the script's own assignments (whole numbers and + − × ÷ only; anything else left as written)."""
    value = SHELL_REF.sub(lambda m: env.get(m[1] or m[3], m[2] if m[2] is not None else m[0]), value)

    def arithmetic(m: re.Match[str]) -> str:
        expression = re.sub(r"[A-Za-z_]\w*", lambda name: env.get(name[0], name[0]), m[1])
        try:
            return str(_integer(ast.parse(expression.strip(), mode="eval").body))
        except (SyntaxError, ValueError, ZeroDivisionError):
            return m[0]

    return ARITHMETIC.sub(arithmetic, value)


def _integer(node: ast.expr) -> int:
    """A shell ``$((…))`` of whole numbers with + − × ÷ (÷ rounding toward zero, as the shell's)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_integer(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        a, b = _integer(node.left), _integer(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        return int(a / b) if abs(a) < 2**52 and abs(b) < 2**52 else a // b
    raise ValueError("not shell arithmetic")


def hydra_overrides(text: str) -> dict[str, Scalar]:
    """A launch script's Hydra ``key=value`` overrides (a Pilot-Commit or verl recipe), its shell variables
    (``gen_prompt_bsz=$((train_prompt_bsz * 3))``) expanded as the shell would.

    >>> hydra_overrides("t=128\\ng=$((t * 3))\\npython3 -m recipe.pc.main_pc\\n  data.gen_batch_size=${g}")
    {'data.gen_batch_size': 384}
    """
    env: dict[str, str] = {}
    out: dict[str, Scalar] = {}
    for raw in text.splitlines():
        line = uncomment(raw).strip()
        found = SHELL_SET.match(line)
        if found and not line.startswith(("python", "--")) and "." not in found[1]:
            env[found[1]] = _expanded(found[2].strip().strip("'\""), env)
            continue
        for token in line.replace("\\", " ").split():
            if OVERRIDE.match(token) and "." in token.partition("=")[0]:
                key, _, value = token.partition("=")
                out[key.lstrip("+")] = scalar(_expanded(value, env).strip("'\""))
    return out


def prime_rl_toml(text: str, path: Path, option: str) -> dict[str, Scalar]:
    """prime-rl's TOML (an ``rl.toml`` or an orchestrator's) as the keys of :data:`PRIME_RL_KEYS`: the
    orchestrator's batch_size, group_size (a train source's own where it sets one), max_steps (the file's
    top-level one for ``rl``), filter_zero_advantages, and from the first train source's curriculum whether
    an ``advantage_range`` gate refills and its ``difficulty_pool`` sampler's pools (prime-rl's own three
    where the sampler names none: orchestrator.py l.172-177)."""
    if sys.version_info < (3, 11):
        raise DataError(
            f"{option} {path}: reading TOML needs Python 3.11 or later (tomllib); give its settings as flags"
        )
    else:
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise DataError(f"{option} {path}: not TOML ({exc})") from exc
        return _prime_rl_values(data)


def _prime_rl_values(data: Mapping[str, Any]) -> dict[str, Scalar]:
    """:func:`prime_rl_toml`'s keys from the parsed TOML."""
    orchestrator = data.get("orchestrator", data)
    out: dict[str, Scalar] = {}
    for key in ("batch_size", "group_size", "max_steps"):
        value = orchestrator.get(key, data.get(key) if key == "max_steps" else None)
        if value is not None:
            out[f"orchestrator.{key}"] = value
    train = orchestrator.get("train", {})
    if "filter_zero_advantages" in train:
        out["orchestrator.train.filter_zero_advantages"] = train["filter_zero_advantages"]
    sources = train.get("source", [])
    first = (
        sources[0] if isinstance(sources, list) and sources else sources if isinstance(sources, dict) else {}
    )
    if "group_size" in first:
        out["orchestrator.group_size"] = first["group_size"]
    curriculum = first.get("curriculum") or {}
    gates = curriculum.get("gates") or {}
    out["curriculum.gate"] = any(g.get("type") == "advantage_range" for g in gates.values())
    sampler = curriculum.get("sampler") or {}
    if sampler.get("type") == "difficulty_pool":
        pools = sampler.get("pools") or {"hard": {"threshold": 0.25, "weight": 0.2},
                                         "normal": {"threshold": 0.75, "weight": 1.0},
                                         "easy": {"threshold": 1.0, "weight": 0.2}}  # fmt: skip
        out["curriculum.pools"] = ",".join(
            f"{name}:{p['threshold']}:{p.get('weight', 1.0)}" for name, p in pools.items()
        )
    return out
