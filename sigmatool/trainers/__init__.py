"""Every trainer's and harness's own formats, in one wing: the readers of their rollout dumps
(:mod:`sigmatool.trainers.dumps`), their config keys and defaults and the batch loop they run
(:mod:`sigmatool.trainers.settings`), a config's values read as the trainer reads them, from a config file
or a command line (:mod:`sigmatool.trainers.loops`; launch scripts and TOML by
:mod:`sigmatool.trainers.scripts`), and the std each one's GRPO advantage divides by
(:mod:`sigmatool.trainers.std`). Nothing outside this wing names a trainer's keys (help text and docstrings
aside, tests/test_house.py): the rest asks :meth:`~sigmatool.trainers.settings.LoopSettings.key`."""
