"""Dogpile's Parallel env: PettingZoo's tests, agreement with the AEC env, conflicts."""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

from card_envs import dogpile_v1
from card_envs.core.aec_env import IllegalActionError
from card_envs.core.cards import card_id
from card_envs.core.conventions import IllegalActionWarning
from card_envs.games.dogpile.engine import BURY, DIG, DOWN, KEEP, PLAY, UP, WAIT
from tests.test_dogpile_rules import stacked

SHORT = {"ticks_per_second": 1, "round_seconds": (4, 3, 2)}


@pytest.mark.parametrize("config", [{}, {"num_players": 2, **SHORT},
                                    {"num_players": 6, "memory": "none", **SHORT},
                                    {"tick_order": "rotate", "shuffler_sees_bones": True,
                                     **SHORT}])
def test_pettingzoo_parallel_api_and_seed(config: dict) -> None:
    # PettingZoo 1.24 (the lowest we support, tested by make test-marl) had no num_cycles here.
    cycles = ({"num_cycles": 200}
              if "num_cycles" in inspect.signature(parallel_seed_test).parameters else {})
    with warnings.catch_warnings():
        # The seed test samples without masks: under the default, its episodes end at once.
        warnings.simplefilter("ignore", IllegalActionWarning)
        parallel_api_test(dogpile_v1.parallel_env(**config), num_cycles=400)
        parallel_seed_test(lambda: dogpile_v1.parallel_env(**config), **cycles)
        parallel_seed_test(lambda: dogpile_v1.parallel_env(illegal_action="void", **config),
                           **cycles)
        # The api test samples within the masks: every action it sends is legal.
        parallel_api_test(dogpile_v1.parallel_env(illegal_action="error", **config),
                          num_cycles=400)


def _target(action: int) -> int:
    """The pile slot an action touches, or -1."""
    if action < DOWN:
        return action - DIG
    if action < UP:
        return action - DOWN
    if action < KEEP:
        return action - UP
    return -1


def _joint_actions(obs: dict, rng: np.random.Generator) -> dict[str, int]:
    """Legal actions for every dog that never go for the same slot."""
    taken: set[int] = set()
    actions = {}
    for agent, o in obs.items():
        legal = [int(a) for a in np.flatnonzero(o["action_mask"])
                 if _target(int(a)) < 0 or _target(int(a)) not in taken]
        a = int(rng.choice(legal))
        taken.add(_target(a))
        actions[agent] = a
    return actions


@pytest.mark.parametrize("config", [{"num_players": 3}, {"num_players": 4, **SHORT},
                                    {"tick_order": "rotate", **SHORT},
                                    {"tick_order": "random", "memory": 0.3, **SHORT}])
def test_parallel_agrees_with_aec_without_conflicts(config: dict) -> None:
    """Same actions, applied by the AEC env in the tick's order: the same game, step by step.
    With forgetting the memories differ by design (the parallel env decays every dog at the
    start of a tick), so there only the position is compared."""
    forgets = config.get("memory", "perfect") != "perfect"
    rng = np.random.default_rng(0)
    for seed in range(2):
        par = dogpile_v1.parallel_env(**config)
        aec = dogpile_v1.env(**config)
        obs, _ = par.reset(seed=seed)
        aec.reset(seed=seed)
        returns = dict.fromkeys(par.possible_agents, 0.0)
        while par.agents:
            actions = _joint_actions(obs, rng)
            if par.engine.phase == PLAY:
                order = list(par.engine.order)
                for seat in order:
                    agent = f"player_{seat}"
                    assert aec.agent_selection == agent
                    aec.step(actions[agent])
            else:
                decider = aec.agent_selection
                aec.step(actions[decider])
            obs, rew, term, trunc, infos = par.step(actions)
            assert not any(i["voided"] for i in infos.values())
            for a, r in rew.items():
                returns[a] += r
            if forgets:
                mine, theirs = par.engine.state_dict()["fields"], aec.engine.state_dict()["fields"]
                del mine["tracker"], theirs["tracker"]
                assert json.dumps(mine) == json.dumps(theirs)
                continue
            assert json.dumps(par.engine.state_dict()) == json.dumps(aec.engine.state_dict())
            for agent, o in obs.items():
                np.testing.assert_array_equal(o["observation"], aec.observe(agent)["observation"])
        assert returns == pytest.approx(aec._cumulative_rewards)
        assert all(aec.terminations.values()) or all(aec.truncations.values())


def _start(illegal_action: str = "void", **config) -> tuple:
    """A short game on a stacked deck; in the "void" mode unless told (these tests are about
    fumbles and idle steps, which play on). The tick order rotates (0 1 2, then 1 2 0, ...)
    unless ``config`` says otherwise: the scripts name who moves first."""
    config.setdefault("tick_order", "rotate")
    par = dogpile_v1.parallel_env(ticks_per_second=1, round_seconds=(4, 3, 2),
                                  illegal_action=illegal_action, **config)
    obs, _ = par.reset(seed=0, options={"deck": stacked({5: "KH", 6: "QH"})})
    return par, obs


def test_two_dogs_digging_the_same_bone_first_in_order_wins() -> None:
    par, _ = _start()
    assert par.engine.order == [0, 1, 2]
    obs, _, _, _, infos = par.step({"player_0": 5, "player_1": 5, "player_2": 6})
    engine = par.engine
    assert engine.held[1] == -1 and engine.dog_phase[1] == 0
    assert int(engine.held[0]) == card_id("KH") and int(engine.held[2]) == card_id("QH")
    assert [i["voided"] for i in infos.values()] == [False, True, False]
    assert [i["void_reason"] for i in infos.values()] == ["", "conflict", ""]
    assert engine.tick_count == 1  # the fumble cost player_1 the tick
    assert obs["player_1"]["action_mask"][WAIT] == 1


def test_two_dogs_putting_bones_on_the_same_spot() -> None:
    par, _ = _start()
    par.step({"player_0": 5, "player_1": 6, "player_2": WAIT})
    engine = par.engine
    assert engine.order == [1, 2, 0]  # player_1 is first this tick
    obs, _, _, _, infos = par.step({"player_0": DOWN + 5, "player_1": UP + 5, "player_2": WAIT})
    assert int(engine.pile[5]) == card_id("QH") and engine.face_up[5]
    assert int(engine.held[0]) == card_id("KH")  # player_0 still holds its bone
    assert infos["player_0"]["voided"] and not infos["player_1"]["voided"]
    assert infos["player_0"]["void_reason"] == "conflict"
    assert obs["player_0"]["action_mask"][DOWN + 6] == 1


def test_masked_out_actions_become_wait() -> None:
    par, _ = _start()
    before = par.engine.state_dict()["fields"]["pile"]
    _, _, _, _, infos = par.step({"player_0": KEEP, "player_1": 10_000, "player_2": "x"})
    assert all(i["voided"] for i in infos.values())
    assert all(i["void_reason"] == "mask" for i in infos.values())  # the caller's mistakes
    assert par.engine.state_dict()["fields"]["pile"] == before
    assert par.engine.tick_count == 1


@pytest.mark.parametrize(("bad", "message"), [
    (KEEP, r"player_1: .*action 162 \(keep\) is not legal for player_1 now; legal: dig:00"),
    (10_000, r"player_1: .*out of range"),
    ("x", r"player_1: .*not an integer action"),
])
def test_illegal_action_error_mode_raises_before_any_dog_moves(bad: object, message: str) -> None:
    """Under ``illegal_action="error"`` a masked-out action is the caller's bug: the step
    raises, naming the agent, and no dog has moved (player_0, first in the tick, would dig)."""
    par, _ = _start(illegal_action="error")
    before = json.dumps(par.engine.state_dict())
    with pytest.raises(IllegalActionError, match=message):
        par.step({"player_0": 5, "player_1": bad, "player_2": 6})
    assert json.dumps(par.engine.state_dict()) == before
    # A legal joint action still plays, and a contested bone is still a fumble, not an error.
    _, _, _, _, infos = par.step({"player_0": 5, "player_1": 5, "player_2": 6})
    assert [i["voided"] for i in infos.values()] == [False, True, False]


def test_illegal_action_error_mode_between_rounds() -> None:
    """Between rounds a dog that is not deciding may only wait; under "error" anything else is
    refused, as is a masked-out move of the deciding dog."""
    par, _ = _start(sniff="required", illegal_action="error")
    while par.engine.phase == PLAY:
        par.step(dict.fromkeys(par.agents, WAIT))
    assert par.engine.current_player == 0
    with pytest.raises(IllegalActionError, match="player_1: .*dig:03.* legal: wait"):
        par.step({"player_0": 3, "player_1": 3, "player_2": WAIT})
    with pytest.raises(IllegalActionError, match="player_0: .*wait"):
        par.step({"player_0": WAIT, "player_1": WAIT, "player_2": WAIT})
    par.step({"player_0": 3, "player_1": WAIT, "player_2": WAIT})
    assert len(par.engine.bag) == 1


def test_illegal_action_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="'illegal_action': allowed values are 'penalty', "
                                         "'void', 'error'"):
        dogpile_v1.parallel_env(illegal_action="raise")


def test_an_illegal_action_ends_the_episode_by_default_before_any_dog_moves() -> None:
    """The AEC env's convention, for a simultaneous step: each offender gets -1 and says why,
    the others 0, every dog is terminated, and nothing has moved (player_0 would dig)."""
    par, _ = _start(illegal_action=dogpile_v1.parallel_env().illegal_action)
    before = json.dumps(par.engine.state_dict())
    with pytest.warns(IllegalActionWarning, match="Illegal move made"):
        obs, rew, term, trunc, infos = par.step({"player_0": 5, "player_1": KEEP,
                                                 "player_2": "x"})
    assert rew == {"player_0": 0.0, "player_1": -1.0, "player_2": -1.0}
    assert all(term.values()) and not any(trunc.values()) and par.agents == []
    assert "illegal_action" not in infos["player_0"]
    assert "keep" in infos["player_1"]["illegal_action"]
    assert "not an integer action" in infos["player_2"]["illegal_action"]
    assert json.dumps(par.engine.state_dict()) == before
    # Ended: every mask all ones, as after any end (no empty row for a masked policy), and
    # the end's fixed-shape infos: nobody won.
    assert all(o["action_mask"].all() for o in obs.values())
    assert all(not info["winners"].any() and info["void_reason"] == "" for info in infos.values())
    with pytest.raises(RuntimeError, match="no live agents"):
        par.step({})
    obs, _ = par.reset(seed=0)
    assert all(o["action_mask"].any() for o in obs.values())


def test_between_rounds_a_dog_that_does_not_decide_must_wait_under_the_penalty() -> None:
    par, _ = _start(illegal_action="penalty", sniff="required")
    while par.engine.phase == PLAY:
        par.step(dict.fromkeys(par.agents, WAIT))
    with pytest.warns(IllegalActionWarning):
        _, rew, term, _, infos = par.step({"player_0": 3, "player_1": 3, "player_2": WAIT})
    assert rew == {"player_0": 0.0, "player_1": -1.0, "player_2": 0.0} and all(term.values())
    assert "legal: wait" in infos["player_1"]["illegal_action"]


def test_a_spot_freed_earlier_in_the_tick_is_still_not_the_later_dogs_to_use() -> None:
    """Masked out at the start of the tick means wait, even if an earlier dog's move made the
    action legal by the time its turn comes: the dog chose without seeing that move."""
    par, _ = _start()
    par.step({"player_0": WAIT, "player_1": WAIT, "player_2": 6})
    engine = par.engine
    assert engine.order == [1, 2, 0] and int(engine.held[2]) == card_id("QH")
    obs, _, _, _, infos = par.step({"player_0": WAIT, "player_1": 5, "player_2": DOWN + 5})
    assert infos["player_2"]["voided"] and not infos["player_1"]["voided"]
    assert infos["player_2"]["void_reason"] == "mask"  # legal by then, but not when it chose
    assert int(engine.held[2]) == card_id("QH") and engine.pile[5] == -1
    assert obs["player_2"]["action_mask"][DOWN + 5] == 1  # free now, for the next tick


def test_between_rounds_only_the_sniffer_decides() -> None:
    par, obs = _start(sniff="required")
    while par.engine.phase == PLAY:
        obs, *_ = par.step(dict.fromkeys(par.agents, WAIT))
    engine = par.engine
    sniffer = engine.current_player
    assert engine.sniffers == [0, 1, 2] and sniffer == 0  # everyone tied at 0
    for agent, o in obs.items():
        mask = o["action_mask"]
        if agent == "player_0":
            assert mask[DIG:DOWN].sum() == 54 - 0 and not mask[WAIT]
        else:
            assert mask.tolist() == [0] * WAIT + [1]
    state = json.dumps(engine.state_dict())
    _, _, _, _, infos = par.step({"player_0": WAIT, "player_1": 3, "player_2": 4})
    assert infos["player_0"]["voided"] and json.dumps(engine.state_dict()) == state
    assert infos["player_0"]["void_reason"] == "mask"
    assert not infos["player_1"]["voided"] and infos["player_1"]["void_reason"] == ""
    assert engine.bag == []
    par.step({"player_0": 3, "player_1": 4, "player_2": 5})
    assert len(engine.bag) == 1 and engine.pile[3] == -1 and engine.pile[4] >= 0


def test_idle_steps_that_reach_max_steps_end_the_episode_with_no_legal_action() -> None:
    """A sniffer idling between rounds counts towards max_steps: the truncated engine offers no
    action, as every ended episode's mask is all zeros."""
    par = dogpile_v1.parallel_env(ticks_per_second=1, round_seconds=(4, 3, 2), sniff="required",
                                  max_steps=14, illegal_action="void")
    par.reset(seed=0)
    while par.engine.phase == PLAY:
        par.step(dict.fromkeys(par.agents, WAIT))
    for _ in range(50):  # bounded: if idle steps did not count, this would never end
        if not par.agents:
            break
        _, _, term, trunc, _ = par.step(dict.fromkeys(par.agents, WAIT))
    else:
        pytest.fail("50 idle steps past max_steps and the episode goes on")
    assert all(trunc.values()) and not any(term.values())
    assert par.engine.truncated and not par.engine.legal_mask().any()


@pytest.mark.parametrize("max_steps", [30, 60])
def test_idle_steps_count_towards_max_steps_after_play_resumes(max_steps: int) -> None:
    """Idle steps taken between rounds still count once play resumes: the episode truncates
    when the engine's steps and the idle ones reach max_steps (it ran on by the idle ones)."""
    par = dogpile_v1.parallel_env(ticks_per_second=1, round_seconds=(4, 3, 2), sniff="required",
                                  max_steps=max_steps, illegal_action="void")
    obs, _ = par.reset(seed=0)
    while par.engine.phase == PLAY:
        obs, *_ = par.step(dict.fromkeys(par.agents, WAIT))
    for _ in range(3):  # the sniffer idles: waiting is not a sniff
        obs, *_ = par.step(dict.fromkeys(par.agents, WAIT))
    while par.agents:
        masks = {a: obs[a]["action_mask"] for a in par.agents}
        obs, _, term, trunc, _ = par.step(
            {a: WAIT if m[WAIT] else int(np.flatnonzero(m)[0]) for a, m in masks.items()})
    assert all(trunc.values()) and not any(term.values())
    assert par.engine.num_steps + 3 == max_steps


def _remembered(par, agent: str, slot: int) -> int:
    """The card ``agent``'s observation shows at a face-down pile ``slot``, or -1."""
    engine = par.engine
    return int(engine._pile_view(par.agent_name_mapping[agent])[slot])


def test_with_no_memory_every_dog_sees_a_move_of_its_tick_once() -> None:
    """Under memory="none" a dog keeps what it saw until its next decision. In a parallel tick
    every dog decided before any move, so a bone put down face down early in the tick's order
    is in every dog's next observation, and gone after the tick that follows."""
    par = dogpile_v1.parallel_env(memory="none", ticks_per_second=1, round_seconds=(8, 8, 8))
    par.reset(seed=0, options={"deck": stacked({5: "KH"})})
    wait = dict.fromkeys(par.agents, WAIT)
    par.step({**wait, "player_0": DIG + 5})
    while par.engine.order[0] != 0:
        par.step(wait)
    par.step({**wait, "player_0": DOWN + 5})  # player_0 is first in this tick's order
    assert not par.engine.face_up[5]
    assert [_remembered(par, a, 5) for a in par.agents] == [card_id("KH")] * 3
    par.step(wait)
    assert [_remembered(par, a, 5) for a in par.agents] == [-1] * 3


def test_with_no_memory_the_burier_knows_where_it_buried() -> None:
    """RULES.md "BURY": face down, the others do not see the bone, but the burier does, even
    after every dog's memory decayed at the start of the parallel tick (memory="none")."""
    par = dogpile_v1.parallel_env(memory="none", ticks_per_second=1, round_seconds=(8, 8, 8))
    par.reset(seed=0, options={"deck": stacked({5: "KH"})})
    wait = dict.fromkeys(par.agents, WAIT)
    for action in (DIG + 5, KEEP, BURY, DOWN + 5):
        par.step({**wait, "player_0": action})
    assert int(par.engine.pile[5]) == card_id("KH") and not par.engine.face_up[5]
    assert [_remembered(par, a, 5) for a in par.agents] == [card_id("KH"), -1, -1]


# -- search hooks (issue 38): clone, resample_hidden, state_dict / load_state_dict ------------
def _random_actions(obs: dict, rng: np.random.Generator) -> dict[str, int]:
    """Any legal action for every dog, conflicts included."""
    return {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}


def _play(par, obs: dict, rng: np.random.Generator, steps: int) -> list:
    """Step ``steps`` times with random legal actions; what each step returned, comparable."""
    trace = []
    for _ in range(steps):
        if not par.agents:
            break
        obs, rew, term, trunc, infos = par.step(_random_actions(obs, rng))
        trace.append(({a: o["observation"].tolist() for a, o in obs.items()}, rew, term, trunc,
                      {a: i["voided"] for a, i in infos.items()}))
    return trace


@pytest.mark.parametrize("config", [{}, {"memory": 0.3, "num_players": 4, **SHORT}])
def test_state_dict_round_trip_replays_the_same_game(config: dict) -> None:
    par = dogpile_v1.parallel_env(**config)
    obs, _ = par.reset(seed=5)
    _play(par, obs, np.random.default_rng(0), 30)
    snap = json.loads(json.dumps(par.state_dict()))  # JSON-safe
    assert snap["parallel"] == {"idle_steps": 0}
    cont = par.engine.observation(0)
    expected = _play(par, {a: {"observation": par.engine.observation(i),
                               "action_mask": par._masks[i].copy()}
                           for i, a in enumerate(par.agents)}, np.random.default_rng(1), 40)
    other = dogpile_v1.parallel_env(**config)
    obs2, infos2 = other.load_state_dict(snap)
    assert set(obs2) == set(other.agents) == set(infos2)
    np.testing.assert_array_equal(obs2["player_0"]["observation"], cont)
    assert _play(other, obs2, np.random.default_rng(1), 40) == expected
    assert other.state_dict() == par.state_dict()


def test_clone_is_independent_and_plays_on_identically() -> None:
    par = dogpile_v1.parallel_env(**SHORT)
    obs, _ = par.reset(seed=2)
    _play(par, obs, np.random.default_rng(3), 10)
    before = json.dumps(par.state_dict())
    twin = par.clone()
    obs_now = {a: {"observation": par.engine.observation(i), "action_mask": par._masks[i].copy()}
               for i, a in enumerate(par.agents)}
    trace = _play(twin, obs_now, np.random.default_rng(4), 20)
    assert json.dumps(par.state_dict()) == before  # the original did not move
    assert _play(par, obs_now, np.random.default_rng(4), 20) == trace


def test_resample_hidden_keeps_the_agents_view_and_redraws_the_rest() -> None:
    par = dogpile_v1.parallel_env(**SHORT)
    obs, _ = par.reset(seed=0)
    _play(par, obs, np.random.default_rng(0), 6)
    mine = par.engine.observation(1)
    states = set()
    for seed in range(5):
        probe = par.clone()
        probe.resample_hidden("player_1", seed)
        np.testing.assert_array_equal(probe.engine.observation(1), mine)
        probe.engine.check_invariants()
        states.add(probe.state().tobytes())
    assert len(states) > 1  # the face-down bones were redrawn
    par.resample_hidden(0, np.random.default_rng(0))  # a seat number and a Generator
    with pytest.raises(KeyError, match="unknown agent 'player_9'"):
        par.resample_hidden("player_9")
    with pytest.raises(ValueError, match="invalid seat -1"):
        par.resample_hidden(-1)


def test_hooks_need_a_reset_and_refuse_bad_snapshots() -> None:
    par = dogpile_v1.parallel_env(**SHORT)
    for call in (par.state_dict, lambda: par.resample_hidden("player_0")):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    par.reset(seed=0)
    snap = par.state_dict()
    with pytest.raises(ValueError, match="'parallel' holds"):
        par.load_state_dict({**snap, "parallel": {"idle_steps": -1}})
    with pytest.raises(ValueError, match="not an engine snapshot"):
        par.load_state_dict([snap])


def test_an_aec_snapshot_loads_between_ticks_but_not_mid_tick() -> None:
    aec = dogpile_v1.env(**SHORT)
    aec.reset(seed=0)
    for _ in range(3):  # one whole tick of three dogs
        aec.step(WAIT)
    par = dogpile_v1.parallel_env(**SHORT)
    obs, _ = par.load_state_dict(aec.state_dict())
    assert par.engine.tick_count == 1 and set(obs) == set(par.possible_agents)
    aec.step(WAIT)  # one dog into the next tick
    with pytest.raises(ValueError, match="middle of a tick"):
        par.load_state_dict(aec.state_dict())
    assert par.engine.tick_count == 1  # refused before anything changed


def test_a_finished_games_snapshot_leaves_no_live_agents() -> None:
    par = dogpile_v1.parallel_env(**SHORT)
    obs, _ = par.reset(seed=1)
    rng = np.random.default_rng(0)
    while par.agents:
        obs, *_ = par.step(_random_actions(obs, rng))
    snap = par.state_dict()
    other = dogpile_v1.parallel_env(**SHORT)
    obs, infos = other.load_state_dict(snap)
    assert obs == {} and infos == {} and other.agents == []
    with pytest.raises(RuntimeError, match="no live agents"):
        other.step({})


def test_a_finished_game_masks_all_ones_and_reports_winners() -> None:
    """After the end every dog's mask is all ones, as the AEC and Gymnasium views' (an empty
    row makes a masked policy sample NaN); infos hold a boolean ``winners`` vector, and
    ``result()`` the full result."""
    par, obs = _start()
    rng = np.random.default_rng(0)
    while par.agents:
        obs, _, _, _, infos = par.step(_joint_actions(obs, rng))
    assert all(o["action_mask"].all() for o in obs.values())
    result = par.result()
    for info in infos.values():
        assert info["winners"].dtype == np.bool_ and info["winners"].shape == (3,)
        assert np.flatnonzero(info["winners"]).tolist() == result["winners"]
