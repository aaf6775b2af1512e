"""Ray RLlib: every game as an RLlib ``MultiAgentEnv`` (the new API stack's env interface).

RLlib's stock ``PettingZooEnv`` drops a turn-based loser's terminal -1 (it is paid on a step
the loser never takes), and its masking example expects the mask under keys PettingZoo's
classic envs do not use. These adapters keep our observation dicts
(``{"observation", "action_mask"}``, read by :mod:`card_envs.adapters.rllib_module`) and pay
every seat what the game paid it, on that seat's own transitions:

* :class:`TurnBasedEnv` (every game): only the seat to act gets an observation. A seat's
  rewards are held until its next observation, which RLlib credits to the seat's previous
  action. When the game ends (terminated or truncated), every seat that acted in the episode
  gets its final observation (mask all ones, as the AEC env's), what it is still owed, and
  its terminated/truncated flag, so its last action earns the terminal reward and a truncated
  seat has the observation RLlib needs to bootstrap. A seat the game finishes early (PettingZoo's
  dead-agent step) is closed the same way at that moment. A seat that never acted has no
  decision to credit and is left out, as RLlib itself leaves out agents that never stepped.
* :class:`SimultaneousEnv` (Dogpile): its PettingZoo Parallel env, where every dog chooses at
  once each tick, passed through with the ``"__all__"`` flags RLlib needs.

Agents are PettingZoo's names (``player_0``...). Imported only when used: it imports Ray.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ray.rllib.env.multi_agent_env import MultiAgentEnv

from card_envs.core.aec_env import CardAECEnv

#: The ``register_env`` name :func:`env_creator` is registered under by the trainer.
ENV_NAME = "card_envs"


def _options(config: Mapping[str, Any]) -> tuple[str, dict[str, Any], str]:
    """``config``'s game, game options and illegal-action mode, checked."""
    unknown = set(config) - {"game", "env", "illegal_action", "reward", "reward_scale"}
    if unknown:
        raise ValueError(f"unknown RLlib env config keys {sorted(unknown)}: expected 'game', "
                         "'env' (the game's options), 'illegal_action', 'reward' and "
                         "'reward_scale'")
    if "game" not in config:
        raise ValueError("the RLlib env config needs 'game' (one of card_envs.games.GAMES)")
    from card_envs.games import get_game

    game = str(config["game"])
    get_game(game)  # an unknown game names the available ones
    options = config.get("env") or {}
    if not isinstance(options, Mapping):
        raise ValueError(f"env: the game's options as a mapping, got {options!r}")
    return game, dict(options), str(config.get("illegal_action", "penalty"))


class _Payout:
    """What each seat is paid of a step's rewards: with ``reward: "zero_sum"`` its own reward
    less the others' mean, times ``reward_scale`` (the SB3 trainer's ``selfplay.reward`` and
    ``reward_scale``, so both trainers pay the same); the game's rewards by default."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.mode = str(config.get("reward", "learner"))
        if self.mode not in ("learner", "zero_sum"):
            raise ValueError(f"reward: 'learner' (each seat its own reward) or 'zero_sum', "
                             f"got {self.mode!r}")
        scale = config.get("reward_scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
            raise ValueError(f"reward_scale: a number > 0, got {scale!r}")
        self.scale = float(scale)

    def __call__(self, rewards: Mapping[Any, float]) -> dict[Any, float]:
        n = len(rewards)
        if self.mode == "zero_sum" and n > 1:
            total = sum(rewards.values())
            return {a: self.scale * (r - (total - r) / (n - 1)) for a, r in rewards.items()}
        return {a: self.scale * r for a, r in rewards.items()}


class TurnBasedEnv(MultiAgentEnv):
    """One game as an RLlib ``MultiAgentEnv`` with PettingZoo's turn order (module docstring).

    ``config``: ``{"game": <name>, "env": {<game options>}, "illegal_action": <mode>}``, and
    optionally ``"reward": "zero_sum"`` and ``"reward_scale"`` (what each seat is paid, as the
    SB3 trainer's ``selfplay.reward`` and ``reward_scale``).
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        game, options, illegal = _options(config or {})
        from card_envs.games import make_engine

        self.game = game
        self.aec = CardAECEnv(make_engine(game, **options), illegal_action=illegal)
        self.payout = _Payout(config or {})
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = self.possible_agents[:]
        observation_spaces: dict[Any, Any] = dict(self.aec.observation_spaces)
        action_spaces: dict[Any, Any] = dict(self.aec.action_spaces)
        self.observation_spaces, self.action_spaces = observation_spaces, action_spaces
        self._owed: dict[Any, float] = {}
        self._acted: set[Any] = set()
        self._closed: set[Any] = set()

    def reset(self, *, seed: int | None = None, options: dict[Any, Any] | None = None
              ) -> tuple[Any, Any]:
        aec = self.aec
        aec.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        self._owed = dict.fromkeys(self.possible_agents, 0.0)
        self._acted = set()
        self._closed = set()
        first = aec.agent_selection
        return {first: aec.observe(first)}, {first: dict(aec.infos[first])}

    def step(self, action_dict: dict[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
        aec = self.aec
        if not self._owed:
            raise RuntimeError("reset() must be called before step()")
        agent = aec.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"expected an action for {agent!r} only (the seat to act), got "
                             f"actions for {sorted(action_dict)}")
        aec.step(action_dict[agent])
        self._acted.add(agent)
        self._collect()
        obs: dict[str, Any] = {}
        rewards: dict[str, float] = {}
        terminateds: dict[str, bool] = {}
        truncateds: dict[str, bool] = {}
        infos: dict[str, Any] = {}
        # Seats the game has finished: PettingZoo's dead-agent steps, each seat closed here.
        while aec.agents and (aec.terminations[aec.agent_selection]
                              or aec.truncations[aec.agent_selection]):
            dead = aec.agent_selection
            self._close(dead, obs, rewards, terminateds, truncateds, infos)
            aec.step(None)
            self._collect()
        if not aec.agents:  # the game is over: close every seat not closed yet
            for a in self.possible_agents:
                if a not in self._closed:
                    self._close(a, obs, rewards, terminateds, truncateds, infos)
            # ``agents`` keeps the seats just closed: RLlib checks observations against it.
            truncated = any(truncateds.values())  # the step cap ended it
            terminateds["__all__"] = not truncated
            truncateds["__all__"] = truncated
            return obs, rewards, terminateds, truncateds, infos
        nxt = aec.agent_selection
        obs[nxt] = aec.observe(nxt)
        rewards[nxt] = self._pay(nxt)
        infos[nxt] = dict(aec.infos[nxt])
        terminateds["__all__"] = False
        truncateds["__all__"] = False
        self.agents = list(aec.agents)
        return obs, rewards, terminateds, truncateds, infos

    def _collect(self) -> None:
        """Add the AEC env's last step's rewards to what each seat is owed."""
        for a, reward in self.payout(self.aec.rewards).items():
            self._owed[a] += reward

    def _pay(self, agent: str) -> float:
        owed, self._owed[agent] = self._owed[agent], 0.0
        return owed

    def _close(self, agent: Any, obs: dict[str, Any], rewards: dict[str, float],
               terminateds: dict[str, bool], truncateds: dict[str, bool],
               infos: dict[str, Any]) -> None:
        """``agent``'s last transition: final observation, owed reward, done flag. A seat that
        never acted is only marked done (RLlib leaves such an agent out of the episode)."""
        aec = self.aec
        self._closed.add(agent)
        truncated = bool(aec.truncations.get(agent, False))
        terminated = bool(aec.terminations.get(agent, not truncated))
        terminateds[agent] = terminated and not truncated
        truncateds[agent] = truncated
        if agent in self._acted:
            obs[agent] = aec.observe(agent)
            rewards[agent] = self._pay(agent)
            infos[agent] = dict(aec.infos.get(agent, {}))

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


class SimultaneousEnv(MultiAgentEnv):
    """Dogpile's PettingZoo Parallel env (every dog acts each tick) for RLlib."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        game, options, illegal = _options(config or {})
        from card_envs.games import get_game

        spec = get_game(game)
        if not spec.parallel:
            raise ValueError(f"{game} has no Parallel env; use TurnBasedEnv")
        self.game = game
        module = importlib.import_module(spec.module)
        self.par = module.parallel_env(illegal_action=illegal, **options)
        self.payout = _Payout(config or {})
        self.possible_agents = list(self.par.possible_agents)
        self.agents = self.possible_agents[:]
        observation_spaces: dict[Any, Any] = dict(self.par.observation_spaces)
        action_spaces: dict[Any, Any] = dict(self.par.action_spaces)
        self.observation_spaces, self.action_spaces = observation_spaces, action_spaces

    def reset(self, *, seed: int | None = None, options: dict[Any, Any] | None = None
              ) -> tuple[Any, Any]:
        obs, infos = self.par.reset(seed=seed, options=options)
        self.agents = list(self.par.agents)
        return obs, infos

    def step(self, action_dict: dict[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
        obs, rewards, terms, truncs, infos = self.par.step(dict(action_dict))
        rewards = self.payout(rewards)
        done = not self.par.agents
        if not done:  # at the end ``agents`` keeps those given their final observation
            self.agents = list(self.par.agents)
        terminateds = {**terms, "__all__": done and not any(truncs.values())}
        truncateds = {**truncs, "__all__": done and any(truncs.values())}
        return obs, rewards, terminateds, truncateds, infos

    def render(self) -> Any:
        return self.par.render()

    def close(self) -> None:
        self.par.close()


def env_creator(config: Mapping[str, Any]) -> MultiAgentEnv:
    """What ``register_env`` takes: the game's turn-based env, or with ``"parallel": True``
    (Dogpile) its simultaneous one."""
    cfg = dict(config)
    parallel = bool(cfg.pop("parallel", False))
    return SimultaneousEnv(cfg) if parallel else TurnBasedEnv(cfg)
