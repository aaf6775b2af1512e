"""``python -m card_envs``: the ``card-envs`` command."""

from card_envs.cli import main

raise SystemExit(main())
