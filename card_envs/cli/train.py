"""``card-envs train``: the trainer's own command line (``card_envs.training.train``)."""

from __future__ import annotations

import importlib

from card_envs.cli.extras import require


def main(argv: list[str], prog: str) -> int:
    if not require("train", prog):
        return 2
    # By name: the trainer is installed as card_envs.training, which the type checker reads as
    # the repository's training/ (pyproject's package-dir).
    importlib.import_module("card_envs.training.train").main(argv, prog=prog)
    return 0
