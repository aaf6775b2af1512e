"""card-envs: card-game reinforcement-learning environments.

``import card_envs`` registers every game with PettingZoo (``pettingzoo.make("aec",
"card_envs/roy-v0")``) and Gymnasium (``gymnasium.make("card_envs/Roy-v0")``). Per-game entry
modules follow PettingZoo's classic layout: ``from card_envs import roy_v0; roy_v0.env()``.

``card_envs.BUILD`` says whether this process runs the compiled engines (see
:mod:`card_envs.compiled`).
"""

from card_envs import compiled

BUILD = compiled.select()  # before any compiled module is imported

from card_envs.core.registration import register_all  # noqa: E402
from card_envs.games import GAMES, get_game, make_engine  # noqa: E402

__version__ = "0.1.0"
__all__ = ["BUILD", "GAMES", "get_game", "make_engine", "__version__"]

register_all()
