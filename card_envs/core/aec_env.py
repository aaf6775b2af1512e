"""The one PettingZoo AEC environment, shared by every game.

It adapts any :class:`~card_envs.core.engine.Engine` and adds no rules of its own. The checks
PettingZoo's classic wrappers add (reset before use, action in range, dead agents step ``None``,
and TerminateIllegalWrapper's: an illegal move ends the episode with -1 for the offender) live
in the env itself: each is one comparison, where the wrapper chain would cost several Python
calls per step. ``env()`` therefore returns this class as is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from mypy_extensions import mypyc_attr
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from card_envs.core.action_names import ActionNames
from card_envs.core.conventions import (
    DEFAULT_ILLEGAL_ACTION,
    ILLEGAL_MOVE_REWARD,
    check_illegal_action_mode,
    reset_options,
    warn_illegal_move,
)
from card_envs.core.copying import attribute_state, restore_attributes
from card_envs.core.engine import (
    CorruptSnapshotError,
    Engine,
    IllegalActionError,
    integer_action,
)
from card_envs.core.render import (
    RENDER_FPS,
    RENDER_MODES,
    check_render_mode,
    check_render_view,
    render,
)
from card_envs.versions import env_name


def unknown_agent(agent: Any, agents: list[str]) -> KeyError:
    """The error for an agent name the env does not have (a bare KeyError names no choices)."""
    return KeyError(f"unknown agent {agent!r}; agents are {agents}")


def space_of(spaces_by_agent: Mapping[str, spaces.Space], agent: Any,
             agents: list[str]) -> spaces.Space:
    try:
        return spaces_by_agent[agent]
    except KeyError:
        raise unknown_agent(agent, agents) from None


def agent_seat(agent: Any, mapping: Mapping[str, int], engine: Engine,
               agents: list[str]) -> int:
    """The seat of an agent name or seat number (what the envs' search hooks take). A seat
    number is checked here: the engines index arrays with it, where -1 would quietly mean the
    last seat."""
    if isinstance(agent, str):
        try:
            return mapping[agent]
        except KeyError:
            raise unknown_agent(agent, agents) from None
    try:
        return engine.check_seat(agent)
    except ValueError:
        n = len(agents)
        raise ValueError(f"invalid seat {agent!r}: expected an agent name "
                         f"'player_0' to 'player_{n - 1}' or 0..{n - 1}") from None


def reset_first(method: str) -> RuntimeError:
    """The error every env view raises when ``method`` is called before ``reset()``."""
    return RuntimeError(f"reset() must be called before {method}()")


def end_info(engine: Engine) -> dict[str, Any]:
    """What every view's ``info`` holds at the end of an episode: ``winners``, a boolean vector
    of ``num_players`` (all False after a truncation). Fixed-shape on purpose: buffers that
    stack infos (Tianshou's, Gymnasium's vector envs) need the same shape in every episode, so
    the full ``result()`` (lists whose lengths vary) is a method of the env, not an info."""
    winners = np.zeros(engine.num_players, dtype=np.bool_)
    winners[list(engine.winners)] = True
    return {"winners": winners}


@mypyc_attr(allow_interpreted_subclasses=True)  # a wrapper may subclass it (reward shaping)
class CardAECEnv(ActionNames, AECEnv):
    """PettingZoo AEC view of a card-game engine (one class for every game).

    Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``; a seat that
    is not to act gets an all-zero mask. Once the episode has ended, every seat's mask is all
    ones, as the Gymnasium view's: no action is legal then, and a masked policy that runs on
    the final observations (TorchRL's collectors do) must not see a row with nothing allowed,
    which samples NaN. Rewards from a step reach every seat through
    ``_cumulative_rewards`` and :meth:`last`, including seats that did not act.
    ``illegal_action="penalty"`` (the default) ends the episode on an illegal move with -1 for
    the offender and an :class:`~card_envs.core.conventions.IllegalActionWarning`; ``"error"``
    raises :class:`~card_envs.core.engine.IllegalActionError`.
    """

    def __init__(
        self,
        engine: Engine,
        render_mode: Any = None,  # checked below, with errors naming the allowed values
        illegal_action: Any = DEFAULT_ILLEGAL_ACTION,
        render_view: Any = "table",
    ) -> None:
        super().__init__()
        check_render_mode(render_mode)
        check_illegal_action_mode(illegal_action)
        check_render_view(render_view, engine.num_players)
        self.engine = engine
        self.render_mode = render_mode
        self.render_view: Any = render_view
        self.illegal_action = illegal_action
        self.metadata = {
            "name": env_name(engine.name),  # versioned: roy_v1
            "render_modes": list(RENDER_MODES),
            "render_fps": RENDER_FPS,
            "is_parallelizable": False,
        }
        n = engine.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]  # PettingZoo's classic envs set it before reset()
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        low, high = engine.layout.bounds()
        self._num_actions = engine.num_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (engine.num_actions,), dtype=np.int8),
            }
        )
        act_space = spaces.Discrete(engine.num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        slow, shigh = engine.state_layout.bounds()
        self.state_space = spaces.Box(slow, shigh, dtype=np.float32)
        self._zero_mask = np.zeros(engine.num_actions, dtype=np.int8)
        self._ended_mask = np.ones(engine.num_actions, dtype=np.int8)
        self._has_reset = False
        self._rewards_dirty = False
        self._skip_agent_selection: str | None = None

    # -- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent: Any) -> spaces.Space:
        return space_of(self.observation_spaces, agent, self.possible_agents)

    def action_space(self, agent: Any) -> spaces.Space:
        return space_of(self.action_spaces, agent, self.possible_agents)

    # -- episode -----------------------------------------------------------------------------
    def reset(self, seed: Any = None, options: Any = None) -> None:
        opts = reset_options(options)
        self.engine.reset(seed=seed, deck=opts.get("deck"), decks=opts.get("decks"))
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in agents}
        self._skip_agent_selection = None
        self._rewards_dirty = False
        self._has_reset = True
        self.agent_selection = self.possible_agents[self.engine.current_player]
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        if not self._has_reset:
            raise reset_first("step")
        agent = self.agent_selection
        try:
            dead = self.terminations[agent] or self.truncations[agent]
        except KeyError:  # every agent has stepped None: PettingZoo warns and does nothing
            EnvLogger.warn_step_after_terminated_truncated()
            return
        if dead:
            self._was_dead_step(action)
            return
        engine = self.engine
        if type(action) is not int:
            converted = integer_action(action)
            if converted is None:
                self._illegal(agent, action)
                return
            action = converted
        if not (0 <= action < self._num_actions and engine.legal_mask()[action]):
            self._illegal(agent, action)
            return
        self._cumulative_rewards[agent] = 0.0
        engine.step(action)
        # In reward="win" mode engines pay only through finish(), so a live position has no
        # rewards to copy; skipping the scan and the accumulation is most of a step's cost.
        if engine.terminated or engine.truncated or engine.pays_every_step:
            values = engine.rewards.tolist()  # a fifth of ndarray.any()'s cost on a few seats
            if any(values):
                rewards, cumulative = self.rewards, self._cumulative_rewards
                for a, value in zip(self.possible_agents, values, strict=True):
                    rewards[a] = value
                    cumulative[a] += value  # PettingZoo's _accumulate_rewards, fused
                self._rewards_dirty = True
            elif self._rewards_dirty:
                self._clear_step_rewards()
        elif self._rewards_dirty:
            self._clear_step_rewards()
        if engine.terminated or engine.truncated:
            flags = self.terminations if engine.terminated else self.truncations
            info = end_info(engine)
            for a in self.agents:
                flags[a] = True
                self.infos[a] = {"winners": info["winners"].copy()}
        else:
            self.agent_selection = self.possible_agents[engine.current_player]
        if self.render_mode == "human":
            self.render()

    def _was_dead_step(self, action: Any) -> None:
        """PettingZoo's dead-agent step, specialised: in these games every seat's episode ends
        at once, so the next agent to remove is simply the first one left. The agent order and
        the final ``agent_selection`` are exactly PettingZoo's."""
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        del self.terminations[agent]
        del self.truncations[agent]
        del self.rewards[agent]
        del self._cumulative_rewards[agent]
        del self.infos[agent]
        agents = self.agents
        agents.remove(agent)
        if agents:
            if self._skip_agent_selection is None:
                self._skip_agent_selection = agent
            self.agent_selection = agents[0]
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        # Every dead step, as PettingZoo's: a wrapper may have set the rewards behind our
        # bookkeeping (TerminateIllegalWrapper does), and its penalty must be paid once.
        self._clear_step_rewards()

    def _clear_step_rewards(self) -> None:
        for a in self.rewards:
            self.rewards[a] = 0.0
        self._rewards_dirty = False

    def _illegal(self, agent: str, action: Any) -> None:
        """PettingZoo classic's TerminateIllegalWrapper, built in: the episode ends, the
        offender's reward since its last step is replaced by -1, every other seat gets 0 for
        the move, and the dead-agent steps begin at the first agent as the wrapper's
        ``_deads_step_first`` does. Where we differ: truncations stay False (an illegal move
        loses the game; it is not a time limit), every seat's info says what was illegal, and
        the warning is a Python warning (see :func:`warn_illegal_move`)."""
        reason = self.engine.illegal_reason(action)
        if self.illegal_action == "error":
            raise IllegalActionError.of(action, reason)
        warn_illegal_move("obs['action_mask']")
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
            self.terminations[a] = True
            # As every end's infos, ``winners``: all False, nobody won.
            self.infos[a] = {"illegal_action": reason, **end_info(self.engine)}
        self.rewards[agent] = ILLEGAL_MOVE_REWARD
        self._rewards_dirty = True
        self._accumulate_rewards()
        self._skip_agent_selection = agent
        self.agent_selection = self.agents[0]

    def agent_iter(self, max_iter: int = 2**63) -> _AgentIterable:
        if not self._has_reset:
            raise reset_first("agent_iter")
        return _AgentIterable(self, max_iter)

    # -- observations ------------------------------------------------------------------------
    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # The checks cost nothing on the way through: they run only when a lookup fails.
        try:
            agent = self.agent_selection
            return (
                self.observe(agent) if observe else None,
                self._cumulative_rewards[agent],
                self.terminations[agent],
                self.truncations[agent],
                self.infos[agent],
            )
        except (AttributeError, KeyError):
            if not self._has_reset:
                raise reset_first("last") from None
            if not self.agents:
                raise RuntimeError(
                    "last() called after every agent has stepped None at the end of the "
                    "episode; call reset()"
                ) from None
            raise

    def observe(self, agent: Any) -> dict[str, np.ndarray]:
        if not self._has_reset:
            raise reset_first("observe")
        try:
            seat = self.agent_name_mapping[agent]
        except KeyError:
            raise unknown_agent(agent, self.possible_agents) from None
        engine = self.engine
        obs = engine.observation(seat)
        # An agent that stepped None has left ``terminations``; a penalty ends the episode with
        # the engine still live.
        if engine.terminated or engine.truncated or self.terminations.get(agent, True):
            mask = self._ended_mask.copy()
        elif seat == engine.current_player:
            mask = engine.legal_mask().copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        if not self._has_reset:
            raise reset_first("state")
        return self.engine.state_array()

    def result(self) -> dict[str, Any]:
        """How the episode came out: ``winners``, ``steps`` and the game's own scores (the
        engine's ``result()``). Final once the episode has ended; ``info`` then holds only the
        fixed-shape ``winners`` vector."""
        if not self._has_reset:
            raise reset_first("result")
        return self.engine.result()

    # -- utilities ---------------------------------------------------------------------------
    def render(self) -> Any:
        if self.render_mode is not None and not self._has_reset:
            raise reset_first("render")
        return render(self.engine, self.render_mode, self.render_view,
                      self.agent_name_mapping[self.agent_selection])

    def close(self) -> None:
        pass

    def clone(self) -> CardAECEnv:
        """An independent copy of the env and its game, for look-ahead."""
        import copy

        return copy.deepcopy(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and pickles go through the constructor, then restore the bookkeeping: the
        # compiled class cannot be made without running __init__.
        return type(self), (self.engine, self.render_mode, self.illegal_action,
                             self.render_view), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        return attribute_state(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        restore_attributes(self, state)

    def state_dict(self) -> dict[str, Any]:
        """The game's position as JSON-safe data; :meth:`load_state_dict` restores it exactly."""
        if not self._has_reset:
            raise reset_first("state_dict")
        return self.engine.state_dict()

    def load_state_dict(self, state: Any) -> None:
        """Restore an engine snapshot; the env's agent bookkeeping restarts from it. Rewards
        restart at zero (a search sums what comes after the position), except for a finished
        game's snapshot, whose last step's payoff (the engine's ``rewards``) every agent gets
        through ``last()`` as at the live game's end: exact under win rewards; under score
        rewards, points a seat gained earlier since its last turn are not in a snapshot."""
        try:
            self.engine.load_state_dict(state)
        except CorruptSnapshotError:
            self._has_reset = False  # the engine holds half a position: nothing may read it
            raise
        self.agents = self.possible_agents[:]
        done_t, done_tr = self.engine.terminated, self.engine.truncated
        payoff = self.engine.rewards.tolist() if done_t or done_tr else [0.0] * len(self.agents)
        self.rewards = dict(zip(self.agents, payoff, strict=True))
        self._cumulative_rewards = dict(self.rewards)
        self.terminations = {a: done_t for a in self.agents}
        self.truncations = {a: done_tr for a in self.agents}
        # A finished game's snapshot ends as a finished episode does: with the winners.
        done = done_t or done_tr
        self.infos = {a: end_info(self.engine) if done else {} for a in self.agents}
        self._skip_agent_selection = None
        self._rewards_dirty = any(payoff)
        self._has_reset = True
        self.agent_selection = self.possible_agents[self.engine.current_player]

    def resample_hidden(self, agent: Any, rng: Any = None) -> None:
        """Redraw everything ``agent`` cannot know (a determinization), future chance included
        (see the engine's ``resample_hidden``); ``rng`` is a numpy Generator or a seed. The
        agent's own observation does not change."""
        if not self._has_reset:
            raise reset_first("resample_hidden")
        self.engine.resample_hidden(self._seat(agent), rng)

    def _seat(self, agent: Any) -> int:
        return agent_seat(agent, self.agent_name_mapping, self.engine, self.possible_agents)


class _AgentIterable:
    """What ``agent_iter`` returns: PettingZoo's semantics (stop when no agents are left or
    after ``max_iter`` agents) with a generator, which resumes several times faster than an
    iterator class's ``__next__`` in the loop every user writes."""

    __slots__ = ("env", "max_iter")

    def __init__(self, env: CardAECEnv, max_iter: int) -> None:
        self.env = env
        self.max_iter = max_iter

    def __iter__(self) -> Iterator[str]:
        env, left = self.env, self.max_iter
        while env.agents and left > 0:
            left -= 1
            yield env.agent_selection
