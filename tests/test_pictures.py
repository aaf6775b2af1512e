"""Pictures (card_envs.pictures): render_mode="rgb_array" in every env view, SVG of any
position, and a seat's picture showing nothing its observation does not."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import gymnasium
import numpy as np
import pytest

import card_envs  # noqa: F401  (registers the Gymnasium ids)
from card_envs.agents import RandomAgent
from card_envs.games import GAMES, get_game, make_engine
from card_envs.pictures import rgb_array, scene, svg
from card_envs.pictures.raster import FRAME

pytest.importorskip("PIL")


def positions(game: str, seed: int, count: int, gap: int = 7):
    """``count`` live positions of a random game (several games if one ends early)."""
    engine = make_engine(game)
    agent = RandomAgent(seed)
    engine.reset(seed=seed)
    found = 0
    while found < count:
        if engine.done:
            engine.reset()
        for _ in range(gap):
            if engine.done:
                break
            engine.step(agent.act(engine.observation(engine.current_player),
                                  engine.legal_mask()))
        if not engine.done:
            found += 1
            yield engine


@pytest.mark.parametrize("game", sorted(GAMES))
def test_seat_picture_shows_only_what_the_observation_allows(game: str) -> None:
    """Redrawing everything a seat cannot know (resample_hidden keeps its observation) must
    not change its picture; the view from above does show the hidden cards."""
    rng = np.random.default_rng(0)
    differs = 0
    for engine in positions(game, seed=1, count=12):
        for seat in range(engine.num_players):
            mine = scene(engine, "seat", seat).to_dict()
            table = scene(engine, "table").to_dict()
            other = engine.clone()
            other.resample_hidden(seat, rng)
            np.testing.assert_array_equal(other.observation(seat), engine.observation(seat))
            assert scene(other, "seat", seat).to_dict() == mine
            differs += scene(other, "table").to_dict() != table
    assert differs > 0  # the hidden cards were redrawn, and the view from above shows them


@pytest.mark.parametrize("game", sorted(GAMES))
def test_svg_and_rgb_array_of_any_position(game: str) -> None:
    for engine in positions(game, seed=2, count=3):
        for view, seat in (("table", None), ("seat", engine.current_player)):
            root = ET.fromstring(svg(engine, view, seat))
            assert root.tag.endswith("svg") and len(root) > 10
            frame = rgb_array(engine, view, seat)
            assert frame.shape == (*FRAME, 3) and frame.dtype == np.uint8
            assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 5  # a picture, not a fill


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_env_view_renders_rgb_array(game: str) -> None:
    spec = get_game(game)
    gym = gymnasium.wrappers.RenderCollection(
        gymnasium.make(spec.gym_id, render_mode="rgb_array", render_view="seat"))
    gym.reset(seed=0)
    for _ in range(3):
        _, _, done, cut, _ = gym.step(int(np.flatnonzero(gym.unwrapped.action_masks())[0]))
        if done or cut:
            break
    frames = gym.render()  # Gymnasium's convention: every frame, each the same size
    assert len(frames) >= 2 and all(f.shape == (*FRAME, 3) for f in frames)
    import importlib

    module = importlib.import_module(spec.module)
    aec = module.env(render_mode="rgb_array", render_view=0)
    assert aec.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    aec.reset(seed=0)
    assert aec.render().shape == (*FRAME, 3)
    if spec.parallel:
        par = module.parallel_env(render_mode="rgb_array")
        par.reset(seed=0)
        assert par.render().shape == (*FRAME, 3)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_gymnasium_record_video_writes_every_frame(game: str, tmp_path) -> None:
    """Gymnasium's RecordVideo (moviepy, in the dev extra) takes our frames as they are: one
    video per episode with a frame for the reset and one per step."""
    pytest.importorskip("moviepy")
    import imageio

    env = gymnasium.wrappers.RecordVideo(
        gymnasium.make(get_game(game).gym_id, render_mode="rgb_array"), str(tmp_path / "videos"),
        episode_trigger=lambda _: True, disable_logger=True)
    env.reset(seed=0)
    steps = 0
    while steps < 12:
        _, _, done, cut, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        steps += 1
        if done or cut:
            break
    env.close()
    (video,) = (tmp_path / "videos").glob("*.mp4")
    reader = imageio.get_reader(str(video))
    frames = [frame for frame in reader]
    reader.close()
    assert len(frames) == steps + 1
    assert frames[0].shape[:2] == FRAME


def test_bad_render_view_and_missing_pillow_are_named(monkeypatch) -> None:
    from card_envs import roy_v1

    with pytest.raises(ValueError, match="'render_view'.*'table', 'seat' or a seat 0..1"):
        roy_v1.env(render_mode="rgb_array", render_view=2)
    with pytest.raises(ValueError, match="'view'"):
        scene(make_engine("roy"), "above")
    monkeypatch.setitem(sys.modules, "PIL.ImageDraw", None)
    with pytest.raises(ImportError, match=r"card-envs\[render\]"):
        roy_v1.env(render_mode="rgb_array")
    # SB3's make_vec_env offers rgb_array and retries without it on a TypeError.
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    assert make_vec_env("card_envs/Roy-v1", n_envs=1).num_envs == 1
