"""A reduced setting played by the real engine, as an OpenSpiel game (``pyspiel`` Python game).

OpenSpiel's algorithms (best response, expected values, NashConv) then run on it unchanged.
A state holds one engine (copied by ``engine.clone()`` when OpenSpiel clones the state). The
root is a chance node over the setting's deals (equally likely); a move that waits for chance
(a draw) becomes a chance node over the card drawn. A seat's information state is what it was
shown: the observation at each of its decisions and the moves it made (the AEC env's view,
with perfect recall), so a best response maximises per information set, never per world.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import pyspiel


class Setting(Protocol):
    """A reduced, finite two-player setting of one game (e.g. ``RoyEndgame``)."""

    @property
    def horizon(self) -> int: ...
    def num_deals(self) -> int: ...
    def deals(self) -> Any: ...
    def engine(self, deal: Any) -> Any: ...
    @staticmethod
    def draw_outcomes(engine: Any, action: int) -> list[tuple[int, float]] | None: ...
    @staticmethod
    def stalls(engine: Any, action: int) -> bool: ...
    @staticmethod
    def apply(engine: Any, action: int, outcome: int | None) -> None: ...


class _Box:
    """Holds an engine; OpenSpiel deep-copies a Python state's attributes, and an engine is
    copied fastest (and exactly) by its own ``clone()``."""

    __slots__ = ("engine",)

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def __deepcopy__(self, memo: dict[int, Any]) -> _Box:
        return _Box(self.engine.clone() if self.engine is not None else None)


class _Shared:
    """What every state of one game reads and never changes (shared, not copied, by clones)."""

    __slots__ = ("setting", "deal_list")

    def __init__(self, setting: Setting, deal_list: list[Any]) -> None:
        self.setting = setting
        self.deal_list = deal_list

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self


class EngineGame(pyspiel.Game):
    """``setting`` as a two-player, zero-sum, turn-based OpenSpiel game with explicit chance;
    returns are +1 to the winner and -1 to the loser, 0 to both for a hand the setting scores
    a draw."""

    def __init__(self, setting: Setting, name: str = "card_envs_reduced") -> None:
        self.setting = setting
        self.deal_list = list(setting.deals())
        probe = setting.engine(self.deal_list[0])
        game_type = pyspiel.GameType(
            short_name=name, long_name=name,
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
            information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
            utility=pyspiel.GameType.Utility.ZERO_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=2, min_num_players=2,
            provides_information_state_string=True, provides_information_state_tensor=False,
            provides_observation_string=False, provides_observation_tensor=False,
            parameter_specification={})
        info = pyspiel.GameInfo(
            num_distinct_actions=int(probe.num_actions),
            max_chance_outcomes=max(len(self.deal_list), 64),
            num_players=2, min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
            max_game_length=setting.horizon)
        super().__init__(game_type, info, {})
        self.shared = _Shared(setting, self.deal_list)

    def new_initial_state(self) -> EngineState:
        return EngineState(self)


class EngineState(pyspiel.State):
    """A position of :class:`EngineGame` (see the module docstring)."""

    def __init__(self, game: EngineGame) -> None:
        super().__init__(game)
        self._game = game.shared
        self._box = _Box(None)
        self._decisions = 0
        self._pending = -1  # a move waiting for its chance outcome, or -1
        self._over = False
        self._returns = [0.0, 0.0]
        self._keys = ["", ""]

    @property
    def engine(self) -> Any:
        """The engine of this position (read it, never step it: OpenSpiel owns the state)."""
        return self._box.engine

    # -- pyspiel API -------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._over:
            return pyspiel.PlayerId.TERMINAL
        if self._box.engine is None or self._pending >= 0:
            return pyspiel.PlayerId.CHANCE
        return int(self._box.engine.current_player)

    def _legal_actions(self, player: int) -> list[int]:
        return [int(a) for a in self._box.engine.legal_mask().nonzero()[0]]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._box.engine is None:
            p = 1.0 / len(self._game.deal_list)
            return [(i, p) for i in range(len(self._game.deal_list))]
        outcomes = self._game.setting.draw_outcomes(self._box.engine, self._pending)
        assert outcomes is not None
        return outcomes

    def _apply_action(self, action: int) -> None:
        setting = self._game.setting
        if self._box.engine is None:
            self._box.engine = setting.engine(self._game.deal_list[action])
        elif self._pending >= 0:
            setting.apply(self._box.engine, self._pending, action)
            self._pending = -1
        else:
            seat = self._box.engine.current_player
            self._keys[seat] += f"|a{action}"
            self._decisions += 1
            if setting.stalls(self._box.engine, action):
                self._over = True
                return
            if setting.draw_outcomes(self._box.engine, action) is not None:
                self._pending = action
                return
            setting.apply(self._box.engine, action, None)
        self._after_move()

    def _after_move(self) -> None:
        engine = self._box.engine
        if engine.done:
            self._over = True
            winners = list(engine.winners)
            if len(winners) == 1:
                self._returns = [1.0 if s == winners[0] else -1.0 for s in range(2)]
            return
        if self._decisions >= self._game.setting.horizon:
            self._over = True
            return
        seat = engine.current_player
        digest = hashlib.blake2b(engine.observation(seat).tobytes(), digest_size=12)
        self._keys[seat] += "|o" + digest.hexdigest()

    def information_state_string(self, player: int | None = None) -> str:
        """What ``player`` (default: the one to move) has been shown and has done."""
        if player is None:
            player = self.current_player()
        return self._keys[player]

    def is_terminal(self) -> bool:
        return self._over

    def returns(self) -> list[float]:
        return list(self._returns)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal:{action}" if self._box.engine is None else f"drawn:{action}"
        return str(self._box.engine.action_names[action])

    def __str__(self) -> str:
        engine = self._box.engine
        return "<not dealt>" if engine is None else str(engine.render_text())
