"""Game records (card_envs.records): exact replay of every game, the format's refusals, and
``training.evaluate --record``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from card_envs.agents import RandomAgent
from card_envs.games import GAMES, make_engine
from card_envs.records import GameRecord, Recorder, RecordError, replay


def play_recorded(game: str, seed: int, **config: object) -> tuple[GameRecord, list, list]:
    """A random game, recorded, with every seat's observation and the rewards at each step."""
    engine = make_engine(game, **config)
    recorder = Recorder(engine, ["random"] * engine.num_players)
    recorder.reset(seed=seed)
    agent = RandomAgent(seed)
    observations, rewards = [], []
    while not engine.done:
        observations.append([engine.observation(s) for s in range(engine.num_players)])
        recorder.step(agent.act(engine.observation(engine.current_player), engine.legal_mask()))
        rewards.append(engine.rewards.copy())
    assert recorder.record is not None
    return recorder.record, observations, rewards


@pytest.mark.parametrize("game", sorted(GAMES))
def test_replay_reproduces_every_observation_and_reward(game: str) -> None:
    record, observations, rewards = play_recorded(game, seed=11)
    loaded = GameRecord.loads(record.dumps())  # through the file format
    positions = replay(loaded)
    engine = next(positions)
    for t, seen in enumerate(observations):
        for s in range(engine.num_players):
            np.testing.assert_array_equal(engine.observation(s), seen[s], err_msg=f"step {t}")
        engine = next(positions)
        np.testing.assert_array_equal(engine.rewards, rewards[t], err_msg=f"step {t}")
    assert engine.done
    with pytest.raises(StopIteration):
        next(positions)


def test_record_is_small_versioned_json_lines() -> None:
    record, observations, _ = play_recorded("roy", seed=3)
    lines = record.dumps().splitlines()
    head = json.loads(lines[0])
    from card_envs.versions import current

    assert head["format"] == "card-envs-record" and head["format_version"] == 1
    assert head["env"] == current("roy").name and head["env_version"] == current("roy").number
    assert head["seed"] == 3 and head["config"]["num_players"] == 2
    assert len(lines) == len(observations) + 2  # header, one line a decision, the end
    assert json.loads(lines[-1])["end"] is True
    assert len(record.dumps()) < 80 * len(lines)  # tens of bytes a decision


def test_record_from_another_env_version_says_why() -> None:
    record, _, _ = play_recorded("roy", seed=4)
    record.env, record.env_version = "roy_v0", 0
    with pytest.raises(RecordError, match="roy_v0.*changed"):
        next(replay(record))


def test_tampered_record_names_the_step() -> None:
    record, _, _ = play_recorded("roy", seed=5)
    record.steps[2]["name"] = "draw" if record.steps[2]["name"] != "draw" else "end"
    with pytest.raises(RecordError, match="record step 2"):
        list(replay(record))
    record, _, _ = play_recorded("roy", seed=5)
    record.steps[-1]["r"] = [5.0, 5.0]
    with pytest.raises(RecordError, match="rewards"):
        list(replay(record))


@pytest.mark.parametrize("text, problem", [
    ("", "empty"),
    ("not json\n", "line 1: not JSON"),
    ('{"format": "other"}\n', "not a card-envs game record"),
    ('{"format": "card-envs-record", "format_version": 99}\n', "format version 99"),
    ('{"format": "card-envs-record", "format_version": 1, "game": "roy"}\n', "lacks"),
])
def test_malformed_record_is_refused(text: str, problem: str) -> None:
    with pytest.raises(RecordError, match=problem):
        GameRecord.loads(text)


def test_evaluate_records_its_games(tmp_path) -> None:
    pytest.importorskip("torch")
    from training.evaluate import evaluate

    report = evaluate("roy", ["random", "heuristic"], games=4, seed=2, parallel=2,
                      record=str(tmp_path))
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == 4
    for path in files:
        record = GameRecord.load(path)
        assert sorted(record.players) == ["heuristic", "random"]
        *_, engine = replay(record)
        assert engine.result()["winners"] == record.end["result"]["winners"]
    assert report["matches"][0]["games"] == 4
