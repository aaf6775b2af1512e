"""Entry points and registration in PettingZoo's and Gymnasium's registries.

Neither library discovers plugins, so ``import card_envs`` registers every installed game:
``pettingzoo.make("aec", "card_envs/roy-v0")`` and ``gymnasium.make("card_envs/Roy-v0")``.
``gymnasium.make("card_envs:card_envs/Roy-v0")`` imports the package first by itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from card_envs.core.aec_env import CardAECEnv


def aec_constructors(game: str) -> tuple[Callable[..., CardAECEnv], Callable[..., CardAECEnv]]:
    """``(env, raw_env)`` for a game's entry module.

    ``raw_env`` is the bare adapter. ``env`` is what PettingZoo's classic envs return after
    their wrapper chain; here the same checks (reset first, range, mask, dead-agent ``None``)
    are built into the adapter, so ``env`` costs nothing extra per step.
    """

    def raw_env(render_mode: str | None = None, illegal_action: str = "error",
                **config: Any) -> CardAECEnv:
        from card_envs.games import make_engine

        return CardAECEnv(make_engine(game, **config), render_mode=render_mode,
                          illegal_action=illegal_action)

    def env(render_mode: str | None = None, illegal_action: str = "error",
            **config: Any) -> CardAECEnv:
        return raw_env(render_mode=render_mode, illegal_action=illegal_action, **config)

    raw_env.__doc__ = f"The {game} AEC env without extras (same as env(); see module docs)."
    env.__doc__ = f"The {game} AEC env (checks built in). Keyword args are the game's options."
    return env, raw_env


def register_all() -> None:
    import gymnasium
    import pettingzoo

    from card_envs.games import GAMES

    for spec in GAMES.values():
        if spec.gym_id not in gymnasium.registry:
            gymnasium.register(
                id=spec.gym_id,
                entry_point="card_envs.core.gym_env:make_gym_env",
                kwargs={"game": spec.name},
            )
        if spec.pz_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", spec.pz_id, entry_point=f"{spec.module}:env")
        if spec.parallel and spec.pz_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", spec.pz_id, entry_point=f"{spec.module}:parallel_env")
