"""The one single-agent Gymnasium environment, shared by every game.

The learner takes one seat; the env steps every other seat itself with opponent agents until
the learner must act again or the episode ends. Rewards that arrive on an opponent's move
(including the terminal one) are added to the learner's reward for the step that led there.
Rewards paid before the learner's first decision (in ``reward="score"`` mode, a Memory-Uno round
an opponent calls at once, the learner's own points included) ride on its first step, as
``reset()`` returns no reward: an episode's return is the seat's return in the AEC env. A
deal that ends before the learner's first decision is dealt again (``reset()``'s
``info["redeals"]`` counts them): it has no step to return.
The legal-action mask is available as ``action_masks()`` (what sb3-contrib's MaskablePPO calls)
and in ``info["action_mask"]``. Every info value has one shape in every episode (vector envs
stack them): the final step adds ``winners``, a boolean vector of the seats; ``result()``
gives the full result.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from card_envs.agents import AgentSpec, make_agent
from card_envs.core.action_names import ActionNames
from card_envs.core.aec_env import end_info, reset_first
from card_envs.core.config import plain_value
from card_envs.core.conventions import (
    DEFAULT_ILLEGAL_ACTION,
    ILLEGAL_MOVE_REWARD,
    check_illegal_action_mode,
    reset_options,
    warn_illegal_move,
)
from card_envs.core.engine import Engine, IllegalActionError, check_seed, integer_action
from card_envs.core.render import (
    RENDER_FPS,
    RENDER_MODES,
    check_render_mode,
    check_render_view,
    render,
)
from card_envs.versions import env_name

#: Re-deals tried when an episode ends before the learner's first decision.
_MAX_REDEALS = 100


class CardGymEnv(ActionNames, gymnasium.Env):
    """Single-agent view of a card game against fixed opponent policies.

    Args:
        game: registered game name (``"roy"``) or an engine instance.
        opponent: one agent spec for every other seat, or a list with one per other seat
            (in seat order, skipping the learner): ``"random"``, ``"heuristic"``, a saved
            policy's path or a training run's directory (its best policy), a MaskablePPO
            model, an :class:`~card_envs.agents.Agent`, or a callable
            ``(observation, action_mask) -> action``.
        learner_seat: the learner's seat, or ``"random"`` to draw it at every reset.
        render_mode: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (a picture of the
            table, drawn with Pillow: the ``render`` extra).
        render_view: what ``"rgb_array"`` draws: ``"table"`` (from above, every card),
            ``"seat"`` (the learner's point of view) or a seat number.
        illegal_action: ``"penalty"`` (the default, as PettingZoo's classic envs) ends the
            episode with reward -1 (on the learner's first step, plus what was paid before
            it, as every first step), ``info["illegal_action"]`` saying why, and an
            :class:`~card_envs.core.conventions.IllegalActionWarning`; ``"error"`` raises
            :class:`~card_envs.core.engine.IllegalActionError`.
        **config: the game's options (``num_players``, ``memory``, ...).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}

    def __init__(
        self,
        game: str | Engine = "roy",
        opponent: AgentSpec | list[AgentSpec] | tuple[AgentSpec, ...] = "random",
        learner_seat: int | str = 0,
        render_mode: str | None = None,
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        render_view: str | int = "table",
        **config: Any,
    ) -> None:
        if isinstance(game, Engine):
            if config:
                raise ValueError("pass config either to the engine or to the env, not both")
            self.engine = game
        else:
            from card_envs.games import make_engine

            self.engine = make_engine(game, **config)
        engine = self.engine
        n = engine.num_players
        check_render_mode(render_mode)
        check_illegal_action_mode(illegal_action)
        check_render_view(render_view, n)
        self.render_view = render_view
        learner_seat = plain_value(learner_seat)
        if learner_seat != "random" and not (
            type(learner_seat) is int and 0 <= learner_seat < n
        ):
            raise ValueError(f"invalid value {learner_seat!r} for 'learner_seat': allowed values "
                             f"are 0..{n - 1} or 'random'")
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.learner_seat_option = learner_seat
        self.learner = 0 if learner_seat == "random" else int(learner_seat)

        specs: list[AgentSpec]
        if isinstance(opponent, (list, tuple)):
            if len(opponent) != n - 1:
                raise ValueError(f"'opponent' lists {len(opponent)} agents; this game has "
                                 f"{n - 1} opponent seats")
            specs = list(opponent)
        else:
            specs = [opponent] * (n - 1)
        game_name = engine.name
        agent_config = {k: v for k, v in engine.config.items()}
        # One agent object per opponent seat (an Agent instance given once is shared).
        self.opponents = [make_agent(s, game_name, agent_config) for s in specs]

        # The class's metadata plus the versioned env name a saved policy records (roy_v1).
        self.metadata = {**self.metadata, "name": env_name(engine.name)}
        low, high = engine.layout.bounds()
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(engine.num_actions)
        self._terminal_mask = np.ones(engine.num_actions, dtype=np.int8)
        self._seat_rng = np.random.default_rng()
        # Until reset() deals, and after an illegal action ends an episode, step() refuses.
        self._has_reset = False
        self._ended_by_penalty = False
        # An opponent's error left the game at that opponent's turn: no step() may play on.
        self._interrupted = False
        # Paid before the learner's first decision: its first step adds it.
        self._pending_reward = 0.0

    # -- gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        opts = reset_options(options)
        deck, decks = opts.get("deck"), opts.get("decks")
        # Refused before any stream is reseeded.
        if deck is not None and decks is not None:
            raise ValueError("reset() takes 'deck' (the first deal) or 'decks' (one per "
                             "round), not both")
        if deck is not None:
            self.engine.parse_deck(deck)
        if decks is not None:
            self.engine.parse_decks(decks)
        seed = check_seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            # Derive every stream from the one seed so a seeded reset replays exactly.
            ss = np.random.SeedSequence(seed)
            game_ss, seat_ss, *opp_ss = ss.spawn(2 + len(self.opponents))
            engine_seed = int(game_ss.generate_state(1, np.uint64)[0])
            self._seat_rng = np.random.default_rng(seat_ss)
            for agent, s in zip(self.opponents, opp_ss, strict=True):
                agent.seed(int(s.generate_state(1, np.uint32)[0]))
        else:
            engine_seed = None
        redeals = 0
        while redeals < _MAX_REDEALS:
            if self.learner_seat_option == "random":
                self.learner = int(self._seat_rng.integers(self.engine.num_players))
            self.engine.reset(seed=engine_seed, deck=deck, decks=decks)
            engine_seed = None
            reward = self._play_opponents()
            if not self.engine.done:
                break
            if deck is not None or decks is not None:
                raise ValueError("the stacked deck ends the episode before the learner acts")
            redeals += 1
        else:
            raise RuntimeError(
                f"{_MAX_REDEALS} deals in a row ended before the learner's first decision "
                f"(max_steps={self.engine.config['max_steps']!r} may be too small for "
                f"learner_seat={self.learner_seat_option!r})"
            )
        self._pending_reward = reward
        self._has_reset = True
        self._ended_by_penalty = False
        self._interrupted = False
        if self.render_mode == "human":
            self.render()
        info = self._info()
        info["redeals"] = redeals
        return self._observe(), info

    def step(self, action: Any):
        engine = self.engine
        if not self._has_reset:
            raise self._not_playable("step")
        if engine.done or self._ended_by_penalty:
            raise RuntimeError("step() called on a finished episode; call reset()")
        a = integer_action(action)
        if a is None or not engine.is_legal(a):
            reason = engine.illegal_reason(action)
            if self.illegal_action == "error":
                raise IllegalActionError.of(action, reason)
            warn_illegal_move("info['action_mask'] (or action_masks())")
            self._ended_by_penalty = True
            info = self._info()
            info["illegal_action"] = reason
            reward = self._pending_reward + ILLEGAL_MOVE_REWARD
            self._pending_reward = 0.0
            return self._observe(), reward, True, False, info
        engine.step(a)
        reward = float(engine.rewards[self.learner]) + self._pending_reward
        self._pending_reward = 0.0
        if not engine.done:
            reward += self._play_opponents()
        info = self._info()
        if engine.done:
            info.update(end_info(engine))
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, engine.terminated, engine.truncated, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (never all false)."""
        if not self._has_reset:
            raise self._not_playable("action_masks")
        return self._mask().astype(bool)

    def result(self) -> dict[str, Any]:
        """How the episode came out (the engine's ``result()``: winners, steps, the game's
        scores); the final step's ``info`` holds the fixed-shape ``winners`` vector."""
        if not (self._has_reset or self._interrupted):
            raise reset_first("result")
        return self.engine.result()

    def render(self) -> Any:
        # An interrupted episode still holds a dealt position: showing it helps find the error.
        if self.render_mode is not None and not (self._has_reset or self._interrupted):
            raise reset_first("render")
        return render(self.engine, self.render_mode, self.render_view, self.learner)

    def _not_playable(self, method: str) -> RuntimeError:
        if self._interrupted:
            return RuntimeError(f"{method}() called after an opponent's error interrupted the "
                                f"episode at that opponent's turn; call reset()")
        return reset_first(method)

    def _play_opponents(self) -> float:
        """Step opponents until the learner is to act or the episode ends; learner's reward.

        An opponent that raises (a wrong answer, a bug in a callable) leaves the game at its
        own turn: the env then refuses to go on until reset(), rather than play the learner's
        next action for that opponent's seat."""
        engine = self.engine
        learner = self.learner
        total = 0.0
        try:
            while not engine.done and engine.current_player != learner:
                seat = engine.current_player
                agent = self.opponents[seat if seat < learner else seat - 1]
                if getattr(agent, "needs_engine", False):
                    action = agent.act_in(engine)
                else:
                    action = agent.act(engine.observation(seat), engine.legal_mask().copy())
                a = integer_action(action)
                if a is None or not engine.is_legal(a):
                    raise IllegalActionError.of(
                        action, f"opponent {getattr(agent, 'name', agent)!r} in seat {seat}: "
                        + engine.illegal_reason(action)
                    )
                engine.step(a)
                total += float(engine.rewards[learner])
        except BaseException:
            self._has_reset = False
            self._interrupted = True
            raise
        return total

    def _mask(self) -> np.ndarray:
        if self.engine.done or self._ended_by_penalty:
            # Any action is meaningless now; all-ones keeps masked policies free of NaN logits.
            return self._terminal_mask
        return self.engine.legal_mask()

    def _observe(self) -> np.ndarray:
        return self.engine.observation(self.learner)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask().copy(), "learner_seat": self.learner}
