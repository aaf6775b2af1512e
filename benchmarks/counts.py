"""The benchmarks' ``1,2,4,...`` arguments (worker or EnvRunner counts): no heavy imports."""

from __future__ import annotations

import argparse


def parse_counts(text: str, what: str = "counts") -> list[int]:
    """``"1,2,4"`` as ``[1, 2, 4]``; anything else is an argparse error naming ``what``."""
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected {what} such as 1,2,4, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected {what} >= 1, got {text!r}")
    return counts
