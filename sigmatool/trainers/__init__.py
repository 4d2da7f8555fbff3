"""Every trainer's and harness's own formats, in one wing: the readers of their rollout dumps
(:mod:`sigmatool.trainers.dumps`), their config keys and defaults and the batch loop they run
(:mod:`sigmatool.trainers.settings`), and a config's values read as the trainer reads them
(:mod:`sigmatool.trainers.loops`). Nothing outside this wing names a trainer's keys (help text aside)."""
