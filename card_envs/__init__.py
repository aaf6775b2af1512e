"""card-envs: card-game reinforcement-learning environments.

``import card_envs`` registers every game with PettingZoo (``pettingzoo.make("aec",
"card_envs/roy-v1")``) and Gymnasium (``gymnasium.make("card_envs/Roy-v1")``). Per-game entry
modules follow PettingZoo's classic layout: ``from card_envs import roy_v1; roy_v1.env()``.

The ``-v0`` is each game's env version (``card_envs.versions``; docs/versioning.md): a retired
version's module and ids raise :class:`~card_envs.versions.RetiredEnvError` naming the current one.

``card_envs.BUILD`` says whether this process runs the compiled engines (see
:mod:`card_envs.compiled`).
"""

from card_envs import compiled

BUILD = compiled.select()  # before any compiled module is imported

#: The package's version (semantic versioning; docs/versioning.md): a ``.devN`` suffix while
#: CHANGELOG.md's Unreleased section is being written.
__version__ = "0.2.0.dev0"

from card_envs import versions  # noqa: E402
from card_envs.core.registration import register_all  # noqa: E402
from card_envs.games import GAMES, get_game, make_engine  # noqa: E402

__all__ = ["BUILD", "GAMES", "get_game", "make_engine", "__version__"]

versions.install_finder()
register_all()
