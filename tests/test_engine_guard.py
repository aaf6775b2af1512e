"""A bare engine before its first deal: the methods that read the position raise a clear
RuntimeError (``Engine.GUARDED_UNTIL_DEALT``, each checking the engine's ``_dealt`` flag) until
``reset()`` or ``load_state_dict()``, and work as usual afterwards."""

from __future__ import annotations

import contextlib
import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from card_envs.core.engine import CorruptSnapshotError, Engine, IllegalActionError
from card_envs.games import GAMES, make_engine

GAME_NAMES = list(GAMES)


def _first_legal(engine: Engine) -> int:
    return int(np.flatnonzero(engine.legal_mask())[0])


#: One call of each guarded method, with arguments that are right for a dealt engine.
CALLS: dict[str, Callable[[Engine], Any]] = {
    "legal_mask": lambda e: e.legal_mask(),
    "write_observation": lambda e: e.write_observation(0, np.empty(e.layout.size, np.float32)),
    "observation": lambda e: e.observation(0),
    "write_state": lambda e: e.write_state(np.empty(e.state_layout.size, np.float32)),
    "state_array": lambda e: e.state_array(),
    "render_text": lambda e: e.render_text(),
    "result": lambda e: e.result(),
    "illegal_reason": lambda e: e.illegal_reason(0),
    "is_legal": lambda e: e.is_legal(0),
    "checked_step": lambda e: _checked_step_of_any_answer(e),
    "check_invariants": lambda e: e.check_invariants(),
    "state_dict": lambda e: e.state_dict(),
    "resample_hidden": lambda e: e.resample_hidden(0, np.random.default_rng(0)),
    # Last: the calls that change the position (after a step, truncate ends the episode).
    "step": lambda e: e.step(_first_legal(e) if e._dealt else 0),
    "truncate": lambda e: e.truncate(),
}
#: Each game's own public methods that read the position (guarded as those above).
GAME_CALLS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "memory_uno": {"hand_points": lambda e: e.hand_points(0)},
    "dogpile": {"mask_for": lambda e: e.mask_for(0, np.empty(e.num_actions, np.int8))},
    "deluxe_memory": {"reference_observation":
                      lambda e: e.reference_observation(0, np.empty(e.layout.size, np.float32))},
}


def test_the_calls_cover_exactly_the_guarded_methods() -> None:
    assert set(CALLS) == set(Engine.GUARDED_UNTIL_DEALT)


def _checked_step_of_any_answer(engine: Engine) -> None:
    """checked_step(0): a dealt engine may refuse action 0, as it should (IllegalActionError,
    a ValueError); a fresh one must stop at the guard (RuntimeError) first."""
    with contextlib.suppress(IllegalActionError):
        engine.checked_step(0)


def _assert_guarded(engine: Engine) -> None:
    assert not engine._dealt
    for method, call in {**GAME_CALLS.get(engine.name, {}), **CALLS}.items():
        with pytest.raises(RuntimeError) as err:
            call(engine)
        message = str(err.value)
        assert f"{type(engine).__name__}.{method}()" in message, message
        assert "reset()" in message and "load_state_dict()" in message, message


def _assert_usable(engine: Engine) -> None:
    assert engine._dealt
    for call in {**GAME_CALLS.get(engine.name, {}), **CALLS}.values():
        call(engine)  # no guard left in the way, and the engine's own methods work


def _dealt(game: str, seed: int = 1, steps: int = 3) -> Engine:
    engine = make_engine(game)
    engine.reset(seed=seed)
    for _ in range(steps):
        if not engine.done:
            engine.step(_first_legal(engine))
    return engine


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_fresh_engine_refuses_every_guarded_method_naming_it_and_reset(game: str) -> None:
    _assert_guarded(make_engine(game))


@pytest.mark.parametrize("game", GAME_NAMES)
def test_after_reset_every_guarded_method_works_as_on_an_unguarded_engine(game: str) -> None:
    engine = make_engine(game)
    engine.reset(seed=3)
    _assert_usable(engine)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_load_state_dict_on_a_fresh_engine_lifts_the_guard(game: str) -> None:
    source = _dealt(game)
    engine = make_engine(game)
    engine.load_state_dict(source.state_dict())
    assert engine.state_dict() == source.state_dict()
    assert np.array_equal(engine.observation(0), source.observation(0))
    assert np.array_equal(engine.legal_mask(), source.legal_mask())
    _assert_usable(engine)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_refused_snapshot_leaves_a_fresh_engine_guarded(game: str) -> None:
    good = _dealt(game).state_dict()
    engine = make_engine(game)
    with pytest.raises(ValueError, match="snapshot is of game"):
        engine.load_state_dict({**good, "game": "other"})  # refused before loading begins
    _assert_guarded(engine)
    corrupt = copy.deepcopy(good)
    corrupt["fields"]["winners"] = [0]  # refused by the invariants, after loading
    with pytest.raises(CorruptSnapshotError):
        engine.load_state_dict(corrupt)
    _assert_guarded(engine)
    engine.load_state_dict(good)
    _assert_usable(engine)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_refused_deck_leaves_a_fresh_engine_guarded_and_a_dealt_one_as_it_was(
        game: str) -> None:
    engine = make_engine(game)
    bad_deck = engine.deck_cards()[1:]  # one card short
    with pytest.raises(ValueError, match="stacked deck"):
        engine.reset(seed=1, deck=bad_deck)
    _assert_guarded(engine)
    engine.reset(seed=1, deck=engine.deck_cards())  # a good stacked deck deals
    _assert_usable(engine)

    dealt = _dealt(game)
    before = dealt.state_dict()
    with pytest.raises(ValueError, match="stacked deck"):
        dealt.reset(seed=2, deck=bad_deck)
    assert dealt.state_dict() == before
    assert dealt._dealt
    dealt.legal_mask()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_deal_that_fails_on_a_fresh_engine_leaves_it_guarded(game: str) -> None:
    # A Python subclass: the compiled engines take no per-instance method patches.
    class FailingDeal(type(make_engine(game))):  # type: ignore[misc]
        def _deal(self, deck: list[int] | None) -> None:
            raise KeyError("a deal that fails")

    engine = FailingDeal()
    with pytest.raises(KeyError):
        engine.reset(seed=1)
    _assert_guarded(engine)


_COPIES: dict[str, Callable[[Engine], Engine]] = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda e: pickle.loads(pickle.dumps(e)),
    "pickle-0": lambda e: pickle.loads(pickle.dumps(e, protocol=0)),
    "clone": lambda e: e.clone(),
}


@pytest.mark.parametrize("how", list(_COPIES))
@pytest.mark.parametrize("game", GAME_NAMES)
def test_copies_of_a_fresh_engine_keep_the_guard_and_of_a_dealt_one_do_not(
        game: str, how: str) -> None:
    fresh = make_engine(game)
    duplicate = _COPIES[how](fresh)
    _assert_guarded(duplicate)
    duplicate.reset(seed=1)  # lifts the copy's guards, not the original's
    _assert_usable(duplicate)
    _assert_guarded(fresh)

    dealt = _dealt(game)
    duplicate = _COPIES[how](dealt)
    assert duplicate.state_dict() == dealt.state_dict()
    _assert_usable(duplicate)
