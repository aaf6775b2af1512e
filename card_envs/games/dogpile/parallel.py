"""Dogpile's PettingZoo Parallel view: every dog acts at once in each tick.

It drives the same :class:`DogpileEngine` as the AEC env, so both follow one rulebook. A
parallel step during play is one tick: the dogs choose from the position at the start of the
tick, and the engine then applies their actions in that tick's order (the order the AEC env
would ask them in: rotating, or drawn per tick). Conflict resolution:

* The dog earlier in the tick's order wins. An action that was legal at the start of the tick
  but is no longer legal when its turn comes (the bone was dug, or the spot filled, by a dog
  earlier in the order) becomes ``wait``: the dog fumbles and loses the tick.
* An action that was not legal at the start of the tick (masked out, out of range, or not an
  integer) is the caller's mistake, not the dog's, and is found before any dog moves. With
  ``illegal_action="penalty"`` (the default, the AEC and Gymnasium views' convention, after
  PettingZoo's classic envs) the episode ends there: each offending dog gets -1 and
  ``infos[agent]["illegal_action"]`` saying why, every other dog 0, every dog is terminated,
  and one :class:`~card_envs.core.conventions.IllegalActionWarning` is issued. With
  ``illegal_action="error"`` the step raises ``IllegalActionError`` naming the agent and its
  legal actions. With ``illegal_action="void"`` the action becomes ``wait`` and play goes on.
  The actions dict itself must name every live agent and no other: a misspelt or missing
  agent is an error, not a dog that waits.
* A dog whose action became ``wait`` has ``infos[agent]["voided"]`` True for that step, and
  ``infos[agent]["void_reason"]`` says why: ``"mask"`` (its mask did not allow it, under
  ``"void"``: the learner's mistake) or ``"conflict"`` (legal, but lost to a dog earlier in the
  tick); ``""`` when the action was played.

When no conflict happens, a parallel step leaves the engine exactly where the AEC env would be
after the same actions in the tick's order, but for memory: with forgetting (``memory`` not
``"perfect"``) every dog's memory decays at the start of the tick, since every dog decided on
the tick's first observation; the AEC env decays each dog as it decides, after the moves before
it in the tick, which it saw. Between rounds (the untimed SNIFF and shuffle) one
dog decides per parallel step; every other dog's mask allows only ``wait``. Under "penalty"
and "error" anything else is illegal, as is a masked-out action of the deciding dog; under
"void" the others' actions are ignored, and so is a masked-out action of the deciding dog
(nothing happens; such idle steps count towards the ``max_steps`` truncation; ``void_reason``
``"mask"``).

Once the game has ended, every dog's mask is all ones (as the AEC and Gymnasium views'): no
action is legal, and a masked policy run on the final observations sees no empty row. The final
step's infos add ``winners`` (a boolean vector of the dogs); ``result()`` gives the full result.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from card_envs.core.action_names import ActionNames
from card_envs.core.aec_env import agent_seat, end_info, reset_first, space_of
from card_envs.core.conventions import (
    DEFAULT_ILLEGAL_ACTION,
    ILLEGAL_MOVE_REWARD,
    check_illegal_action_mode,
    reset_options,
    warn_illegal_move,
)
from card_envs.core.engine import CorruptSnapshotError, IllegalActionError, integer_action
from card_envs.core.render import (
    RENDER_FPS,
    RENDER_MODES,
    check_render_mode,
    check_render_view,
    render,
)
from card_envs.games.dogpile.engine import NUM_ACTIONS, PLAY, WAIT, DogpileEngine
from card_envs.versions import env_name

#: What a step does with an action its agent's last mask did not allow: "penalty" ends the
#: episode with -1 for each offender, "void" turns it into ``wait`` (flagged in ``infos``),
#: "error" raises. The first is the default, as in the AEC and Gymnasium views.
PARALLEL_ILLEGAL_ACTION_MODES = (DEFAULT_ILLEGAL_ACTION, "void", "error")
#: ``infos[agent]["void_reason"]``: played, voided as masked out, voided by a lost conflict.
NOT_VOIDED, VOID_MASK, VOID_CONFLICT = "", "mask", "conflict"


class DogpileParallelEnv(ActionNames, ParallelEnv):
    """All dogs act simultaneously each tick; see the module docstring for conflicts."""

    metadata = {"name": env_name("dogpile"), "render_modes": list(RENDER_MODES),
                "render_fps": RENDER_FPS, "is_parallelizable": True}
    engine: DogpileEngine

    def __init__(self, render_mode: str | None = None,
                 illegal_action: str = DEFAULT_ILLEGAL_ACTION,
                 render_view: str | int = "table", **config: Any) -> None:
        check_render_mode(render_mode)
        check_illegal_action_mode(illegal_action, PARALLEL_ILLEGAL_ACTION_MODES)
        self.engine = DogpileEngine(**config)
        check_render_view(render_view, self.engine.num_players)
        self.render_mode = render_mode
        self.render_view = render_view
        self.illegal_action = illegal_action
        n = self.engine.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.agents = self.possible_agents[:]  # as PettingZoo's envs do before reset()
        low, high = self.engine.layout.bounds()
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(low, high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (self.engine.num_actions,), dtype=np.int8),
        })
        self._act_space = spaces.Discrete(self.engine.num_actions)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        slow, shigh = self.engine.state_layout.bounds()
        self.state_space = spaces.Box(slow, shigh, dtype=np.float32)
        self._masks = np.zeros((n, self.engine.num_actions), dtype=np.int8)
        self._wait_only = np.zeros(self.engine.num_actions, dtype=np.int8)
        self._wait_only[WAIT] = 1
        self._ended_mask = np.ones(self.engine.num_actions, dtype=np.int8)
        self._idle_steps = 0
        self._has_reset = False
        self._ended_by_penalty = False
        self._live: frozenset[str] = frozenset()

    def observation_space(self, agent: str) -> spaces.Space:
        return space_of(self.observation_spaces, agent, self.possible_agents)

    def action_space(self, agent: str) -> spaces.Space:
        return space_of(self.action_spaces, agent, self.possible_agents)

    # -- episode -----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        opts = reset_options(options)
        self.engine.reset(seed=seed, deck=opts.get("deck"), decks=opts.get("decks"))
        self.agents = self.possible_agents[:]
        self._idle_steps = 0
        self._has_reset = True
        self._ended_by_penalty = False
        self._live = frozenset(self.agents)  # what _check_keys compares with, built once
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        if self.render_mode == "human":  # the deal, as the AEC and Gymnasium views show it
            self.render()
        return self._observe(), infos

    def step(self, actions: dict[str, Any]):
        engine = self.engine
        if not self._has_reset:
            raise reset_first("step")
        if not self.agents:
            raise RuntimeError("step() called with no live agents; call reset()")
        self._check_keys(actions)
        if self.illegal_action != "void":
            illegal = self._illegal_actions(actions)
            if illegal:
                if self.illegal_action == "error":
                    agent, reason = next(iter(illegal.items()))
                    raise IllegalActionError.of(actions[agent], f"{agent}: {reason}")
                return self._end_by_penalty(illegal)
        n = engine.num_players
        rewards = np.zeros(n, dtype=np.float64)
        voided = [NOT_VOIDED] * n
        if engine.phase == PLAY:
            tick = engine.tick_count
            engine.decay_all_for_tick()
            try:
                while not engine.done and engine.phase == PLAY and engine.tick_count == tick:
                    seat = engine.current_player
                    action = self._as_action(actions[self.possible_agents[seat]])
                    if not self._allowed(seat, action):
                        voided[seat] = VOID_MASK
                        action = WAIT
                    elif not engine.legal_mask()[action]:
                        voided[seat] = VOID_CONFLICT
                        action = WAIT
                    self._step_engine(action, rewards)
            finally:
                engine.end_tick_decay()
        else:
            seat = engine.current_player
            action = self._as_action(actions[self.possible_agents[seat]])
            if action >= 0 and engine.legal_mask()[action]:
                self._step_engine(action, rewards)
            else:
                voided[seat] = VOID_MASK
                self._idle_steps += 1
                self._cap_steps()
        agents = self.agents
        obs = self._observe()
        rew = {a: float(rewards[i]) for i, a in enumerate(self.possible_agents) if a in agents}
        term = {a: engine.terminated for a in agents}
        trunc = {a: engine.truncated and not engine.terminated for a in agents}
        infos: dict[str, dict[str, Any]] = {}
        for a in agents:
            reason = voided[self.agent_name_mapping[a]]
            infos[a] = {"voided": reason != NOT_VOIDED, "void_reason": reason}
        if engine.done:
            winners = end_info(engine)["winners"]
            for a in agents:
                infos[a]["winners"] = winners.copy()
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, term, trunc, infos

    def _step_engine(self, action: int, rewards: np.ndarray) -> None:
        self.engine.step(action)
        rewards += self.engine.rewards
        if self._idle_steps:  # the engine's own cap counts its steps only
            self._cap_steps()

    def _cap_steps(self) -> None:
        """Truncate once the engine's steps and the idle ones reach ``max_steps``."""
        engine = self.engine
        if not engine.done and engine.num_steps + self._idle_steps >= engine.step_cap:
            engine.truncate()

    def _check_keys(self, actions: Any) -> None:
        """One action per live dog, and no other keys: a misspelt or missing agent would
        otherwise pass for a dog that chose to wait."""
        if not isinstance(actions, dict):
            raise TypeError("step() takes a dict of actions by agent, got "
                            f"{type(actions).__name__}")
        if actions.keys() != self._live:
            missing = [a for a in self.agents if a not in actions]
            unknown = [a for a in actions if a not in self.agents]
            raise ValueError(f"step() needs one action per live agent: missing {missing}, "
                             f"unknown {unknown}; live agents are {self.agents}")

    def _illegal_actions(self, actions: dict[str, Any]) -> dict[str, str]:
        """Each live agent whose action its last mask did not allow, with the reason: checked
        for all dogs before any moves, so a refused step leaves the game as it was."""
        illegal = {}
        for agent in self.agents:
            seat = self.agent_name_mapping[agent]
            if not self._allowed(seat, self._as_action(actions[agent])):
                illegal[agent] = self.engine.illegal_reason(actions[agent], seat,
                                                            self._masks[seat])
        return illegal

    def _end_by_penalty(self, illegal: dict[str, str]):
        """The AEC env's penalty for a simultaneous step: the episode ends before any dog
        moves, -1 to each offender and 0 to the others."""
        warn_illegal_move("observations[agent]['action_mask']")
        self._ended_by_penalty = True
        agents = self.agents
        obs = self._observe()
        rew = {a: ILLEGAL_MOVE_REWARD if a in illegal else 0.0 for a in agents}
        term = dict.fromkeys(agents, True)
        trunc = dict.fromkeys(agents, False)
        # The keys every step's infos have, and the end's all-False winners (no one won).
        winners = end_info(self.engine)["winners"]
        infos: dict[str, dict[str, Any]] = {
            a: {"voided": False, "void_reason": NOT_VOIDED, "winners": winners.copy()}
            for a in agents}
        for agent, reason in illegal.items():
            infos[agent]["illegal_action"] = reason
        self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rew, term, trunc, infos

    def _allowed(self, seat: int, action: int) -> bool:
        """``action`` (from :meth:`_as_action`) was legal in ``seat``'s last observation: what
        the dog saw when it chose, before any move of this step."""
        return action >= 0 and bool(self._masks[seat, action])

    @staticmethod
    def _as_action(action: Any) -> int:
        """The action as an int, or -1 for anything that is not one (voided like a masked-out
        action; see the module docstring)."""
        a = integer_action(action)
        return a if a is not None and 0 <= a < NUM_ACTIONS else -1

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        engine = self.engine
        out = {}
        for i, agent in enumerate(self.possible_agents):
            if agent not in self.agents:
                continue
            obs = engine.observation(i)
            mask = self._masks[i]
            if engine.done or self._ended_by_penalty:
                mask[:] = self._ended_mask
            elif engine.phase == PLAY or i == engine.current_player:
                engine.mask_for(i, mask)
            else:
                mask[:] = self._wait_only
            out[agent] = {"observation": obs, "action_mask": mask.copy()}
        return out

    # -- utilities ---------------------------------------------------------------------------
    def state(self) -> np.ndarray:
        if not self._has_reset:
            raise reset_first("state")
        return self.engine.state_array()

    def result(self) -> dict[str, Any]:
        """How the game came out (the engine's ``result()``: winners, totals, loot, ...)."""
        if not self._has_reset:
            raise reset_first("result")
        return self.engine.result()

    def render(self) -> Any:
        if self.render_mode is not None and not self._has_reset:
            raise reset_first("render")
        return render(self.engine, self.render_mode, self.render_view,
                      self.engine.current_player)

    def close(self) -> None:
        pass

    # -- search hooks (as the AEC env's) -------------------------------------------------------
    def clone(self) -> DogpileParallelEnv:
        """An independent copy of the env and its game, for look-ahead: stepping it leaves
        this one as it is. Its random streams are copies (see the engine's ``clone``)."""
        return copy.deepcopy(self)

    def resample_hidden(self, agent: Any, rng: Any = None) -> None:
        """Redraw everything ``agent`` (a name or a seat) cannot know, future chance included
        (a determinization; see the engine's ``resample_hidden``); ``rng`` is a numpy
        Generator or a seed. That agent's observation does not change."""
        if not self._has_reset:
            raise reset_first("resample_hidden")
        seat = agent_seat(agent, self.agent_name_mapping, self.engine, self.possible_agents)
        self.engine.resample_hidden(seat, rng)

    def state_dict(self) -> dict[str, Any]:
        """The game's position as JSON-safe data: the engine's snapshot (which the AEC env
        loads too) and, under ``"parallel"``, the idle steps this view counts towards
        ``max_steps``. A parallel step plays whole ticks, so its snapshots fall between ticks."""
        if not self._has_reset:
            raise reset_first("state_dict")
        return {**self.engine.state_dict(), "parallel": {"idle_steps": self._idle_steps}}

    def load_state_dict(self, state: Any) -> tuple[dict[str, dict[str, np.ndarray]],
                                                   dict[str, dict[str, Any]]]:
        """Restore a snapshot (this env's, or the engine's or AEC env's taken between ticks or
        rounds) and return the live agents' observations and infos, as ``reset()`` does; a
        finished game's snapshot leaves no live agents. A snapshot taken in the middle of a
        tick (by the AEC env, after some dogs acted) is refused: this view plays whole ticks."""
        if not isinstance(state, dict) or not isinstance(state.get("fields"), dict):
            raise ValueError("not an engine snapshot: expected keys 'game', 'config', 'fields'")
        fields = state["fields"]
        if fields.get("phase") == PLAY and fields.get("order_pos", 0) != 0:
            raise ValueError(
                f"a snapshot taken in the middle of a tick ({fields['order_pos']} dog(s) of its "
                "order have acted) cannot be loaded into the Parallel env, which plays whole "
                "ticks: take it between ticks")
        extra = state.get("parallel", {"idle_steps": 0})
        idle = extra.get("idle_steps") if isinstance(extra, dict) else None
        if type(idle) is not int or idle < 0:
            raise ValueError(f"snapshot key 'parallel' holds {extra!r}: expected "
                             "{'idle_steps': <integer >= 0>}")
        engine_state = {k: v for k, v in state.items() if k != "parallel"}
        try:
            self.engine.load_state_dict(engine_state)
        except CorruptSnapshotError:
            self._has_reset = False  # the engine holds half a position: nothing may read it
            raise
        engine = self.engine
        self._idle_steps = idle
        self._has_reset = True
        self._ended_by_penalty = False
        self.agents = [] if engine.done else self.possible_agents[:]
        self._live = frozenset(self.agents)
        observations = self._observe()
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        return observations, infos
