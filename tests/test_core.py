"""The shared core: cards, config validation, knowledge tracking, layouts, agents, Gym env."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.agents import RandomAgent, make_agent
from card_envs.agents.provenance import UnrecordedPolicyWarning
from card_envs.core import cards
from card_envs.core.aec_env import CardAECEnv
from card_envs.core.config import COMMON_OPTIONS, Option, int_range, resolve_config
from card_envs.core.conventions import IllegalActionWarning
from card_envs.core.engine import Engine
from card_envs.core.gym_env import CardGymEnv
from card_envs.core.knowledge import UNKNOWN, KnowledgeTracker, deal_counted_first
from card_envs.core.obs_layout import ObsLayout
from card_envs.games import make_engine


# -- cards -------------------------------------------------------------------------------------
def test_card_codes_round_trip_and_tables() -> None:
    for c in range(54):
        assert cards.card_id(cards.card_code(c)) == c
    assert cards.card_code(cards.card_id("th")) == "TH"
    assert cards.card_id("10h") == cards.card_id("TH")
    ace_spades = cards.card_id("AS")
    assert cards.RANK_OF[ace_spades] == cards.ACE and cards.SUIT_OF[ace_spades] == cards.SPADES
    assert cards.COLOUR_OF[cards.card_id("QD")] == cards.RED
    assert cards.COLOUR_OF[cards.card_id("QC")] == cards.BLACK
    assert cards.FACE_VALUE_OF[cards.card_id("KH")] == 13
    assert cards.FACE_VALUE_OF[cards.card_id("X2")] == 0
    assert cards.COLOUR_OF[52] == cards.NO_COLOUR


def test_bad_card_codes_are_named() -> None:
    with pytest.raises(ValueError, match="'1H'"):
        cards.card_id("1H")
    with pytest.raises(ValueError, match="outside"):
        cards.card_code(54)


def test_stacked_deck_validation_names_the_problem() -> None:
    full = [cards.card_code(c) for c in range(52)]
    assert cards.parse_stacked_deck(full, range(52)) == list(range(52))
    assert cards.parse_stacked_deck(" ".join(full), range(52)) == list(range(52))
    with pytest.raises(ValueError, match="missing: KS"):
        cards.parse_stacked_deck(full[:-1], range(52))
    with pytest.raises(ValueError, match="duplicated or not in this game's deck: AC"):
        cards.parse_stacked_deck(full[:-1] + ["AC"], range(52))
    with pytest.raises(ValueError, match="X1"):
        cards.parse_stacked_deck(full + ["X1"], range(52))
    with pytest.raises(ValueError, match="malformed stacked deck"):
        cards.parse_stacked_deck(full[:-1] + ["ZZ"], range(52))


# -- config --------------------------------------------------------------------------------------
OPTS = {
    "num_players": Option(2, "", choices=(2, 3)),
    "target": Option(10, "", check=int_range(1)),
}


def test_config_defaults_and_overrides() -> None:
    assert resolve_config("g", OPTS, {}) == {"num_players": 2, "target": 10}
    assert resolve_config("g", OPTS, {"target": 5})["target"] == 5


def test_config_errors_name_key_and_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"unknown config key 'targt' .*did you mean 'target'"):
        resolve_config("g", OPTS, {"targt": 3})
    with pytest.raises(ValueError, match=r"'num_players': allowed values are 2, 3"):
        resolve_config("g", OPTS, {"num_players": 5})
    with pytest.raises(ValueError, match="num_players"):
        resolve_config("g", OPTS, {"num_players": True})  # True == 1 must not sneak through
    with pytest.raises(ValueError, match=r"'target': expected an integer >= 1"):
        resolve_config("g", OPTS, {"target": 0})
    # Among choices that hold 0 and 1 (a seat, a flag), a bool is not a seat, nor 1 a flag.
    mixed = {"dealer": Option("random", "", choices=("random", 0, 1)),
             "flag": Option(False, "", choices=(False, True))}
    with pytest.raises(ValueError, match="'dealer'"):
        resolve_config("g", mixed, {"dealer": True})
    with pytest.raises(ValueError, match="'flag'"):
        resolve_config("g", mixed, {"flag": 1})


def test_a_sequence_option_is_the_same_config_from_a_list_or_a_tuple() -> None:
    """YAML, JSON and argparse give lists: Dogpile's round_seconds from a file must make the
    same config as the default tuple, or a snapshot of one env is refused by the other."""
    a, b = make_engine("dogpile", round_seconds=[30, 20, np.int64(10)]), make_engine("dogpile")
    assert a.config["round_seconds"] == b.config["round_seconds"] == (30, 20, 10)
    assert type(a.config["round_seconds"][2]) is int
    a.reset(seed=0)
    b.load_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict()


def test_an_option_that_would_have_no_effect_is_an_error() -> None:
    """Nothing is silently ignored: joker_swaps without Jokin' Around, a target score in
    one-hand episodes. Their defaults stay accepted (a config listing every key)."""
    with pytest.raises(ValueError, match=r"joker_swaps=2 changes nothing in play unless "
                                         r"jokin_around=True \(it is False\)"):
        make_engine("deluxe_memory", joker_swaps=2)
    for game in ("roy", "mega_memory"):
        with pytest.raises(ValueError, match=r"target_score=7 changes nothing in play unless "
                                             r"episode='game'"):
            make_engine(game, target_score=7)
        default = make_engine(game).config["target_score"]
        assert make_engine(game, target_score=default).config["target_score"] == default
        assert make_engine(game, target_score=7, episode="game").config["target_score"] == 7
    make_engine("deluxe_memory", joker_swaps=2, jokin_around=True)
    make_engine("deluxe_memory", joker_swaps=10)


def test_memory_option_takes_a_forget_probability_in_0_1() -> None:
    """A forget probability outside [0, 1] is no probability: it must be refused by name."""
    for p in (0.0, 0.25, 1.0, 1):
        assert resolve_config("g", COMMON_OPTIONS, {"memory": p})["memory"] == p
    for bad in (1.5, -0.1, 2):
        with pytest.raises(ValueError, match=r"'memory': expected .*probability in \[0, 1\]"):
            resolve_config("g", COMMON_OPTIONS, {"memory": bad})


# -- knowledge tracker ----------------------------------------------------------------------------
def test_tracker_events_move_knowledge_with_cards() -> None:
    t = KnowledgeTracker(3, 5)
    t.show(0, 7, [1])
    t.show_all(1, 9)
    assert t.known[:, 0].tolist() == [UNKNOWN, 7, UNKNOWN]
    t.swap(0, 1)
    assert t.known[:, 1].tolist() == [UNKNOWN, 7, UNKNOWN]
    assert t.known[:, 0].tolist() == [9, 9, 9]
    t.move(0, 4)
    assert t.known[:, 4].tolist() == [9, 9, 9] and (t.known[:, 0] == UNKNOWN).all()
    t.conceal(4)
    assert (t.known[:, 4] == UNKNOWN).all()


def test_memory_modes() -> None:
    perfect = KnowledgeTracker(2, 10, "perfect")
    none = KnowledgeTracker(2, 10, "none")
    half = KnowledgeTracker(2, 1000, 0.5)
    for t in (perfect, none, half):
        t.reset(0)
        for s in range(t.num_slots):
            t.show_all(s, 3)
    for t in (perfect, none, half):
        t.after_decision(0)
    assert (perfect.known == 3).all()
    assert (none.known[0] == UNKNOWN).all() and (none.known[1] == 3).all()
    kept = (half.known[0] != UNKNOWN).mean()
    assert 0.4 < kept < 0.6 and (half.known[1] == 3).all()


def test_tracker_forgetting_is_seeded() -> None:
    """The same seed forgets the same slots; another seed forgets others (the stream is the
    seed's, not a fixed one)."""
    def after_one_decision(seed: int) -> np.ndarray:
        t = KnowledgeTracker(1, 50, 0.3)
        t.reset(seed)
        for s in range(50):
            t.show_all(s, 1)
        t.after_decision(0)
        return t.known.copy()

    a, b, c = after_one_decision(42), after_one_decision(42), after_one_decision(43)
    assert np.array_equal(a, b)
    assert 0 < (a == UNKNOWN).sum() < 50  # some slots forgotten, some kept
    assert not np.array_equal(a, c)


def test_tracker_reset_restarts_forgetting_from_its_seed() -> None:
    """Each reset starts the forgetting stream from its seed: a replayed episode forgets alike."""
    t = KnowledgeTracker(1, 50, 0.3)
    kept = []
    for _ in range(2):
        t.reset(42)
        t.known.fill(1)
        t.after_decision(0)
        kept.append(t.known.copy())
    assert np.array_equal(kept[0], kept[1])


def test_memory_mode_does_not_change_the_deal() -> None:
    e1, e2 = make_engine("roy", memory="perfect"), make_engine("roy", memory=0.3)
    e1.reset(seed=9)
    e2.reset(seed=9)
    assert e1.hands == e2.hands and e1.deck == e2.deck


# -- engine base ---------------------------------------------------------------------------------
def test_win_rewards_split_ties_and_pay_nothing_on_a_full_tie() -> None:
    """The promised win rewards: +1/k to each of k tied winners, -1 to the rest, 0 on a full tie."""
    engine = make_engine("memory_uno", num_players=4)
    assert engine.win_rewards([2]).tolist() == [-1.0, -1.0, 1.0, -1.0]
    assert engine.win_rewards([0, 3]).tolist() == [0.5, -1.0, -1.0, 0.5]
    assert engine.win_rewards([0, 1, 2, 3]).tolist() == [0.0] * 4
    assert engine.win_rewards([]).tolist() == [0.0] * 4


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
def test_max_steps_truncates_after_that_many_decisions(game: str) -> None:
    """COMMON_OPTIONS: `max_steps` "Truncate the episode after this many decisions, every seat's
    counted (None: the game's own safety cap)"; RULES.md: "truncate after this many decisions".
    The same decisions leave an uncapped episode running."""
    capped, free = make_engine(game, max_steps=5), make_engine(game)
    capped.reset(seed=0)
    free.reset(seed=0)
    rng = np.random.default_rng(0)
    for step in range(5):
        assert not capped.done, step
        action = int(rng.choice(np.flatnonzero(capped.legal_mask())))
        capped.step(action)
        free.step(action)
    assert capped.truncated and not capped.terminated and not capped.legal_mask().any()
    assert not free.done and free.legal_mask().any()


def test_an_episode_ending_on_the_cap_step_is_terminated_not_truncated() -> None:
    """The cap truncates episodes it cuts short; one the rules end on the cap step terminated."""
    engine = make_engine("roy")
    engine.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = []
    while not engine.done:
        actions.append(int(rng.choice(np.flatnonzero(engine.legal_mask()))))
        engine.step(actions[-1])
    assert engine.terminated
    capped = make_engine("roy", max_steps=len(actions))
    capped.reset(seed=0)
    for action in actions:
        capped.step(action)
    assert (capped.terminated, capped.truncated) == (True, False)


class _PeekEngine(Engine):
    """The smallest engine with memory and score rewards, to test the base driver alone.

    Two seats, one hidden card each. Seats act in pairs of turns (0, 0, 1, 1, ...): ``peek``
    shows the seat its own card; ``pass`` pays the other seat 1 point under ``reward="score"``.
    Seat 0 wins after six decisions."""

    name = "peek_toy"
    CARDS = (10, 20)

    def _build(self) -> None:
        self.num_actions = 2
        self.action_names = ["peek", "pass"]
        self.layout = ObsLayout()
        self.layout.add("known", 2, low=UNKNOWN, high=51)
        self.state_layout = self.layout
        self.tracker = KnowledgeTracker(2, 2, self.memory)
        self._mask = np.ones(2, dtype=np.int8)
        self._mask_valid = True

    def _deal(self, deck: list[int] | None) -> None:
        self.current_player = 0
        self._mask.fill(1)

    def _apply(self, action: int) -> None:
        seat = self.current_player
        if action == 0:
            self.tracker.show(seat, self.CARDS[seat], [seat])
        elif self.reward_mode == "score":
            self.rewards[1 - seat] += 1.0
        if self.num_steps == 6:
            self.finish([0])
        else:
            self.current_player = (self.num_steps // 2) % 2

    def legal_mask(self) -> np.ndarray:
        return self._mask

    def write_observation(self, seat: int, out: np.ndarray) -> None:
        out[:] = self.tracker.known[seat]

    def deck_cards(self) -> list[int]:
        return list(self.CARDS)

    def all_cards(self) -> list[int]:
        return list(self.CARDS)


def test_memory_decays_as_a_seat_decides_so_its_own_reveal_lasts_to_its_next_decision() -> None:
    """Forgetting runs before the decision plays out: with ``memory="none"`` the card a seat's
    own peek showed it is in the observation of its next decision, and gone after that."""
    engine = _PeekEngine(memory="none")
    engine.reset(seed=0)
    engine.step(engine.action_id("peek"))
    assert engine.observation(0).tolist() == [10, UNKNOWN]
    engine.step(engine.action_id("pass"))
    assert engine.observation(0).tolist() == [UNKNOWN, UNKNOWN]


def test_a_waiting_seat_accumulates_the_rewards_of_every_step_since_it_last_acted() -> None:
    """PettingZoo's contract: ``last()`` gives the acting seat the sum of its rewards since its
    previous turn; ``rewards`` holds the last step's alone."""
    env = CardAECEnv(_PeekEngine(reward="score"))
    env.reset(seed=0)
    env.step(env.action_id("pass"))
    env.step(env.action_id("pass"))  # both of seat 0's turns pay seat 1
    assert env.agent_selection == "player_1"
    assert env.rewards["player_1"] == 1.0
    assert env.last()[1] == 2.0
    env.step(env.action_id("peek"))  # acting spends what it had collected
    assert env.last()[1] == 0.0


# -- observation layout ----------------------------------------------------------------------------
def test_obs_layout() -> None:
    layout = ObsLayout()
    a = layout.add("a", 3)
    layout.add("b", 2, low=-1.0, high=2.0)
    low, high = layout.bounds()
    assert layout.size == 5 and a == slice(0, 3)
    assert low.tolist() == [0, 0, 0, -1, -1] and high.tolist() == [1, 1, 1, 2, 2]
    view = layout.decode(np.arange(5, dtype=np.float32))
    assert view["b"].tolist() == [3.0, 4.0]
    with pytest.raises(ValueError, match="twice"):
        layout.add("a", 1)


def test_obs_layout_refuses_a_vector_of_another_length() -> None:
    """A heuristic decoding a longer (or shorter) vector would read fields at the wrong places."""
    layout = ObsLayout()
    layout.add("a", 3)
    for size in (2, 4):
        with pytest.raises(ValueError, match=f"observation has {size} values, layout expects 3"):
            layout.decode(np.zeros(size, dtype=np.float32))


# -- agents ----------------------------------------------------------------------------------------
def test_make_agent_specs() -> None:
    assert make_agent("random", "roy").name == "random"
    assert make_agent("heuristic", "roy", {"num_players": 3}).name == "heuristic"
    agent = make_agent(lambda obs, mask: int(np.flatnonzero(mask)[0]), "roy")
    assert agent.act(np.zeros(3), np.array([0, 1, 1])) == 1
    with pytest.raises(ValueError, match="unknown agent 'smart'"):
        make_agent("smart", "roy")
    with pytest.raises(FileNotFoundError):
        make_agent("missing_policy.zip", "roy")


def test_random_agent_only_picks_legal_actions() -> None:
    agent = RandomAgent(0)
    mask = np.zeros(10, np.int8)
    mask[[2, 7]] = 1
    assert {agent.act(np.zeros(1), mask) for _ in range(50)} == {2, 7}
    with pytest.raises(ValueError, match="all-zero"):
        agent.act(np.zeros(1), np.zeros(10, np.int8))


# -- single-agent Gymnasium env --------------------------------------------------------------------
def test_gym_env_seeded_reset_replays_exactly() -> None:
    env = CardGymEnv("roy", opponent="random", learner_seat="random")

    def episode(seed: int) -> list:
        obs, info = env.reset(seed=seed)
        trace = [obs.tobytes(), info["learner_seat"]]
        agent = RandomAgent(seed)
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(agent.act(obs, info["action_mask"]))
            trace.append((obs.tobytes(), r))
            done = term or trunc
        return trace

    assert episode(3) == episode(3)
    assert {tuple(episode(s)[:2])[1] for s in range(12)} == {0, 1}  # the seat is drawn


def test_gym_env_terminal_reward_reaches_learner_on_opponent_move() -> None:
    # Learner always draws when it can; a heuristic opponent usually goes out on its own move.
    env = CardGymEnv("roy", opponent="heuristic", learner_seat=0)
    losses_on_opponent_move = 0
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = info["action_mask"]
            action = 68 if mask[68] else (69 if mask[69] else int(np.flatnonzero(mask)[0]))
            obs, r, term, trunc, info = env.step(action)
            done = term or trunc
        if info["winners"].tolist() == [False, True]:
            assert r == -1.0
            losses_on_opponent_move += 1
    assert losses_on_opponent_move > 0


@pytest.mark.parametrize("num_players, learner_seat", [(3, 1), (4, 3)])
def test_gym_score_rewards_add_up_to_the_learners_score(num_players: int,
                                                        learner_seat: int) -> None:
    """Score-mode points paid on the learner's move, on every opponent move before its next
    decision, and before its first decision (a round an opponent calls at once: its first step
    carries them) all reach it: the returns are exactly minus its Memory-Uno totals."""
    env = CardGymEnv("memory_uno", num_players=num_players, reward="score", episode="game",
                     learner_seat=learner_seat)
    agent = RandomAgent(0)
    paid_before_first_decision = 0
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        early = -env.engine.totals[learner_seat]
        paid_before_first_decision += early != 0
        done, ret = False, 0.0
        while not done:
            obs, r, term, trunc, info = env.step(agent.act(obs, info["action_mask"]))
            ret += r
            done = term or trunc
        assert ret == -env.result()["totals"][learner_seat]
    if num_players == 4:
        assert paid_before_first_decision > 0  # the case the first step's reward covers


def test_gym_penalty_on_the_first_step_carries_what_was_paid_before_it() -> None:
    """An illegal first move under "penalty" pays -1 on top of the points scored before the
    learner's first decision, as the AEC env's last() pays those before its -1."""
    env = CardGymEnv("memory_uno", num_players=4, reward="score", episode="game",
                     learner_seat=3, illegal_action="penalty")
    for seed in range(20):
        _, info = env.reset(seed=seed)
        early = -env.engine.totals[3]
        if early:
            break
    else:
        pytest.fail("no deal scored a round before the learner's first decision")
    with pytest.warns(IllegalActionWarning):
        _, reward, term, _, _ = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert term and reward == early - 1.0


def test_gym_seeded_reset_redeals_when_the_first_deal_never_reaches_the_learner() -> None:
    """A deal that ends before the learner's first decision is re-dealt from the seeded stream,
    not from the same seed again (which would deal the same dead hand every time)."""
    # The first player is drawn: about half of the seeds' first deals start with seat 0, whose
    # first move hits max_steps=1.
    env = CardGymEnv("memory_uno", num_players=2, learner_seat=1, max_steps=1)
    redeals = []
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        assert env.engine.current_player == 1 and info["action_mask"].any()
        assert np.array_equal(env.reset(seed=seed)[0], obs)
        redeals.append(info["redeals"])
    # The deals thrown away are counted: results measured through this env lack them.
    assert 0 in redeals and max(redeals) >= 1


def test_gym_env_opponent_list_and_callable() -> None:
    calls = []

    def first_legal(obs, mask):
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    env = CardGymEnv("roy", opponent=["random", first_legal], num_players=3, learner_seat=1)
    obs, info = env.reset(seed=0)
    for _ in range(20):
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            obs, info = env.reset()
    assert calls
    with pytest.raises(ValueError, match="opponent"):
        CardGymEnv("roy", opponent=["random"], num_players=3)
    with pytest.raises(ValueError, match="learner_seat"):
        CardGymEnv("roy", learner_seat=5)


@pytest.mark.parametrize("learner_seat", [0, 1, 2])
def test_gym_env_opponent_list_is_in_seat_order_skipping_the_learner(learner_seat: int) -> None:
    acted: dict[str, set[int]] = {"first": set(), "second": set()}

    def recorder(name: str):
        def act(obs, mask):
            acted[name].add(env.engine.current_player)
            return int(np.flatnonzero(mask)[0])
        return act

    env = CardGymEnv("roy", opponent=[recorder("first"), recorder("second")], num_players=3,
                     learner_seat=learner_seat)
    obs, info = env.reset(seed=0)
    for _ in range(30):
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            obs, info = env.reset()
    first, second = [s for s in range(3) if s != learner_seat]
    assert acted == {"first": {first}, "second": {second}}


def test_gym_env_illegal_action_modes() -> None:
    from card_envs.core.aec_env import IllegalActionError

    env = CardGymEnv("roy", illegal_action="error")
    obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(bad)
    env = CardGymEnv("roy")  # "penalty", PettingZoo classic's convention, is the default
    obs, info = env.reset(seed=0)
    with pytest.warns(IllegalActionWarning, match="Illegal move made"):
        obs, r, term, trunc, info = env.step(bad)
    assert r == -1.0 and term and not trunc and "not legal" in info["illegal_action"]
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(bad)


def test_maskable_ppo_learns_a_few_thousand_steps_and_plays_as_an_opponent(tmp_path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = CardGymEnv("roy", opponent="random", learner_seat="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0,
                        verbose=0, device="cpu")
    model.learn(total_timesteps=2048)
    path = tmp_path / "roy_policy.zip"
    model.save(path)
    # SB3's own save records no env: an opponent spec like any other, with a warning that
    # only its shapes are checked (record_identity stamps the game and options on it).
    with pytest.warns(UnrecordedPolicyWarning, match="only its observation and action shapes"):
        env2 = CardGymEnv("roy", opponent=str(path))
    obs, info = env2.reset(seed=1)
    obs, r, term, trunc, info = env2.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env2.observation_space.contains(obs)


def _play_to_end(env, seed: int) -> None:
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    while True:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            return
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("module", ["memory_uno_v1", "dogpile_v1"])
def test_dead_agent_steps_match_pettingzoo(module: str) -> None:
    """Our specialised dead-agent step removes agents in PettingZoo's order and leaves the
    same ``agent_selection`` and rewards as the base class's generic one."""
    import copy
    import importlib

    from pettingzoo import AECEnv

    env = importlib.import_module(f"card_envs.{module}").raw_env(num_players=4)
    _play_to_end(env, seed=3)
    ref = copy.deepcopy(env)
    while env.agents:
        env.step(None)
        AECEnv._was_dead_step(ref, None)
        assert env.agents == ref.agents
        assert env.agent_selection == ref.agent_selection
        assert env.rewards == ref.rewards
        assert env._cumulative_rewards == ref._cumulative_rewards
    with pytest.raises(ValueError, match="only valid action is None"):
        _play_to_end(env, seed=4)
        env.step(0)


def test_agent_iter_stops_at_max_iter_and_when_agents_are_gone() -> None:
    from card_envs import roy_v1

    env = roy_v1.env()
    env.reset(seed=0)
    seen = []
    for agent in env.agent_iter(max_iter=5):
        seen.append(agent)
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert len(seen) == 5
    _play_to_end(env, seed=1)
    dead_steps = 0
    for _ in env.agent_iter():  # only the dead steps remain
        env.step(None)
        dead_steps += 1
    assert dead_steps == len(env.possible_agents) and not env.agents


def test_a_redeal_deals_counted_cards_to_the_deck_and_shuffles_it() -> None:
    """Cards a seat counts in a reshuffled deck go to the deck first, anywhere in it: they used
    to lie at its bottom (drawn last) in every redeal."""
    counted = np.full(10, UNKNOWN, dtype=np.int8)
    counted[[2, 5]] = [2, 5]
    tops = set()
    for seed in range(40):
        deck, rest, spare = deal_counted_first(list(range(10)), counted, [10, 11], 6,
                                               np.random.default_rng(seed))
        assert {2, 5} <= set(deck) and len(deck) == 6 and not spare
        assert sorted(deck + rest) == list(range(12))
        tops.add(deck[-1])  # the card drawn next
    assert {2, 5} <= tops and len(tops) > 4
