"""``card-envs play``: :mod:`card_envs.play.main`."""

from __future__ import annotations

from card_envs.play.main import main as play


def main(argv: list[str], prog: str) -> int:
    return play(argv, prog)
