"""``card-envs bench``: :mod:`card_envs.bench.throughput`."""

from __future__ import annotations

from card_envs.bench.throughput import main as throughput


def main(argv: list[str], prog: str) -> int:
    return throughput(argv, prog)
