"""``python -m card_envs.play``: the same as ``card-envs play``."""

import sys

from card_envs.play.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "python -m card_envs.play"))
