"""``card-envs evaluate``: the evaluator's own command line (``card_envs.training.evaluate``)."""

from __future__ import annotations

import importlib

from card_envs.cli.extras import require


def main(argv: list[str], prog: str) -> int:
    if not require("train", prog):
        return 2
    importlib.import_module("card_envs.training.evaluate").main(argv, prog=prog)
    return 0
