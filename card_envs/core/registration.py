"""Entry points and registration in PettingZoo's and Gymnasium's registries.

Neither library discovers plugins, so ``import card_envs`` registers every installed game:
``pettingzoo.make("aec", "card_envs/roy-v1")`` and ``gymnasium.make("card_envs/Roy-v1")``.
``gymnasium.make("card_envs:card_envs/Roy-v1")`` imports the package first by itself. The
version suffix is each game's current version (card_envs/env_versions.json); a retired version's
ids stay registered and raise :class:`~card_envs.versions.RetiredEnvError` naming the current one.
PettingZoo has a registry from 1.27 on; with an older PettingZoo (AgileRL pins one) the games
register with Gymnasium only, and the entry modules (``roy_v1.env()``) are the way in.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from card_envs.core.aec_env import CardAECEnv
from card_envs.core.conventions import DEFAULT_ILLEGAL_ACTION

if TYPE_CHECKING:  # the Gymnasium env pulls in the agents: imported when first made
    from card_envs.core.gym_env import CardGymEnv


def aec_constructors(game: str) -> tuple[Callable[..., CardAECEnv], Callable[..., CardAECEnv]]:
    """``(env, raw_env)`` for a game's entry module.

    ``raw_env`` is the bare adapter. ``env`` is what PettingZoo's classic envs return after
    their wrapper chain; here the same checks (reset first, range, mask, dead-agent ``None``)
    are built into the adapter, so ``env`` costs nothing extra per step.
    """

    def raw_env(render_mode: str | None = None, illegal_action: str = DEFAULT_ILLEGAL_ACTION,
                render_view: str | int = "table", **config: Any) -> CardAECEnv:
        from card_envs.games import make_engine

        return CardAECEnv(make_engine(game, **config), render_mode=render_mode,
                          illegal_action=illegal_action, render_view=render_view)

    def env(render_mode: str | None = None, illegal_action: str = DEFAULT_ILLEGAL_ACTION,
            render_view: str | int = "table", **config: Any) -> CardAECEnv:
        return raw_env(render_mode=render_mode, illegal_action=illegal_action,
                       render_view=render_view, **config)

    options = options_doc(game)
    raw_env.__doc__ = f"The {game} AEC env without extras (the same as env()).\n\n{options}"
    env.__doc__ = (f"The {game} PettingZoo AEC env; the checks PettingZoo's wrappers add are "
                   f"built in.\n\n{options}")
    return env, raw_env


def options_doc(game: str) -> str:
    """The keyword arguments of a game's envs, for their docstrings (``help(roy_v1.env)``)."""
    from card_envs.games import get_game

    lines = ["Args:",
             "    render_mode: None, 'ansi', 'human' or 'rgb_array' (a picture; needs the "
             "render extra).",
             "    render_view: what 'rgb_array' draws: 'table' (from above, the default), "
             "'seat' (the seat",
             "        to act) or a seat number (that seat's point of view).",
             "    illegal_action: 'penalty' (the default, as PettingZoo's classic envs: an "
             "illegal move ends",
             "        the episode with -1 to the offender and an IllegalActionWarning) or "
             "'error' (raise",
             "        IllegalActionError).",
             "    The game's options:"]
    for name, option in get_game(game).engine_class().options().items():
        lines.append(textwrap.fill(f"{name} (default {option.default!r}): {option.doc}",
                                   width=88, initial_indent="    ",
                                   subsequent_indent="        "))
    return "\n".join(lines)


def gym_constructor(game: str) -> Callable[..., CardGymEnv]:
    """The entry point of a game's Gymnasium id. The id fixes the game: ``gymnasium.make``
    merges keyword arguments over the registered ones, so a ``game`` argument would otherwise
    quietly turn ``card_envs/Roy-v1`` into another game."""

    def gym_env(**kwargs: Any) -> CardGymEnv:
        if "game" in kwargs:
            from card_envs.games import GAMES

            other = GAMES.get(kwargs["game"]) if isinstance(kwargs["game"], str) else None
            hint = f"; make {other.gym_id!r} for that game" if other else ""
            raise ValueError(f"{GAMES[game].gym_id!r} is the {game} env: 'game' is not one of "
                             f"its options{hint}")
        from card_envs.core.gym_env import CardGymEnv

        return CardGymEnv(game, **kwargs)

    gym_env.__doc__ = (f"The {game} Gymnasium env (``gymnasium.make``'s entry point); keyword "
                       "args as :class:`~card_envs.core.gym_env.CardGymEnv`'s, but for 'game'.")
    return gym_env


def pettingzoo_has_registry() -> bool:
    """Whether the installed PettingZoo has ``register`` and its registries (1.27 and later)."""
    import pettingzoo

    return all(hasattr(pettingzoo, name)
               for name in ("register", "aec_registry", "parallel_registry"))


def register_all() -> None:
    import gymnasium
    import pettingzoo

    from card_envs.games import GAMES

    register_retired()

    for spec in GAMES.values():
        if spec.gym_id not in gymnasium.registry:
            gymnasium.register(
                id=spec.gym_id,
                entry_point=f"{spec.module}:gym_env",
            )
        if not pettingzoo_has_registry():
            continue
        if spec.pz_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", spec.pz_id, entry_point=f"{spec.module}:env")
        if spec.parallel and spec.pz_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", spec.pz_id, entry_point=f"{spec.module}:parallel_env")


def register_retired() -> None:
    """Register every retired version's ids with an entry point that raises, naming the current
    id: Gymnasium's own message for an unregistered old version ("Please use ...") would not
    say what changed, and PettingZoo's would list every id it knows."""
    import gymnasium
    import pettingzoo

    from card_envs.games import GAMES
    from card_envs.versions import VERSIONS, retired_constructor

    for game, versions in VERSIONS.items():
        parallel = game in GAMES and GAMES[game].parallel
        for version in versions[:-1]:
            if version.gym_id not in gymnasium.registry:
                gymnasium.register(id=version.gym_id,
                                   entry_point=retired_constructor(version, version.gym_id))
            if not pettingzoo_has_registry():  # PettingZoo before 1.27
                continue
            pz = retired_constructor(version, version.pz_id)
            if version.pz_id not in pettingzoo.aec_registry:
                pettingzoo.register("aec", version.pz_id, entry_point=pz)
            if parallel and version.pz_id not in pettingzoo.parallel_registry:
                pettingzoo.register("parallel", version.pz_id, entry_point=pz)
