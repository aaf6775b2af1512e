"""``card-envs demo``: :mod:`card_envs.demo`."""

from __future__ import annotations

from card_envs.demo import main as demo


def main(argv: list[str], prog: str) -> int:
    demo(argv, prog)
    return 0
