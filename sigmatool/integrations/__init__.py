"""Handing a schedule to the trainer: schedule files that say what made them (:mod:`.meta`), read back as
one :class:`~sigmatool.integrations.schedule.Schedule`; the trainers' own plugs, a sampler for verl ≤ 0.7
(:mod:`.verl`) and for TRL's GRPO (:mod:`.trl`), importable without torch, verl or TRL; and what ``sigmatool
export --for`` writes for verl, TRL, prime-rl and open-instruct (:mod:`.exports`, :mod:`.difficulty`).

The samplers need neither torch, verl nor TRL to import (TRL's runs without them too); this face imports
nothing.
"""

from __future__ import annotations

__all__: list[str] = []
