"""Environment throughput, as ratios against references measured in the same run: the
repository's entry to ``card-envs bench`` (:mod:`card_envs.bench.throughput`).

    python benchmarks/throughput.py                 # every game, 3 s per measurement
    python benchmarks/throughput.py --games roy --seconds 1 --rounds 3
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from card_envs.bench.throughput import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], "python benchmarks/throughput.py"))
