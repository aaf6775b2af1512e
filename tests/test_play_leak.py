"""The play app shows a person nothing their seat's observation does not allow: over many
random positions of every game, the payload a person's page receives is the same whatever the
cards they cannot know are (everything hidden from them redrawn by ``resample_hidden``, which
keeps their observation), and it is exactly what payload.py builds from their observation and
action mask alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

from card_envs.agents import RandomAgent
from card_envs.games import GAMES
from card_envs.play.payload import seat_view
from card_envs.play.sessions import Store

POSITIONS = 40


def payload_text(session, engine) -> str:
    """The session's payload (its events aside: the other seats' public moves) for
    ``engine``'s position, as the page receives it."""
    saved = session.engine
    session.engine = engine
    try:
        body = session.payload(len(session.events))
    finally:
        session.engine = saved
    body.pop("events")
    return json.dumps(body, sort_keys=True, default=lambda v: v.tolist())


@pytest.mark.parametrize("game", sorted(GAMES))
def test_person_payload_is_their_observation_only(game: str) -> None:
    n = GAMES[game].engine_class()().num_players
    rng = np.random.default_rng(1)
    checked = 0
    store = Store()
    for deal in range(10 * POSITIONS):
        if checked >= POSITIONS:
            break
        person = deal % n
        seats = [{"kind": "person" if s == person else "random"} for s in range(n)]
        session = store.new_session({"game": game, "seats": seats, "seed": 17 + deal})
        mover = RandomAgent(deal)
        for _ in range(-(-POSITIONS // n)):  # a few positions of each deal, every seat in turn
            if session.engine.done:
                break
            engine = session.engine
            text = payload_text(session, engine)
            other = engine.clone()
            other.resample_hidden(person, rng)
            assert payload_text(session, other) == text, "the payload shows a hidden card"
            obs, mask = engine.observation(person), engine.legal_mask()
            body = json.loads(text)
            built = seat_view(session.game, obs, mask, person)
            assert body["scene"] == json.loads(json.dumps(built["scene"]))
            assert body["legal"] == built["legal"]
            checked += 1
            session.move(int(mover.act(obs, mask)))
    assert checked >= POSITIONS
