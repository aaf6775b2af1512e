"""card-envs: card-game reinforcement-learning environments.

``import card_envs`` registers every game with PettingZoo (``pettingzoo.make("aec",
"card_envs/roy-v0")``) and Gymnasium (``gymnasium.make("card_envs/Roy-v0")``). Per-game entry
modules follow PettingZoo's classic layout: ``from card_envs import roy_v0; roy_v0.env()``.
"""

from card_envs.core.registration import register_all
from card_envs.games import GAMES, get_game, make_engine

__version__ = "0.1.0"
__all__ = ["GAMES", "get_game", "make_engine", "__version__"]

register_all()
