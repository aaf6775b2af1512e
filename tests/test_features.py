"""Derived policy features (card_envs/agents/features.py and each game's features.py).

Known-answer checks on hand-written observations, then shape and sanity on real play: the
features are a function of one seat's observation alone, so they cannot leak what it may not
know.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from card_envs.agents.features import DerivedFeatures
from card_envs.core.cards import card_id
from card_envs.games import GAMES, get_game, make_engine

FEATURE_GAMES = [name for name, spec in GAMES.items() if spec.features]
CONFIGS = {"deluxe_memory": {"num_players": 2}, "mega_memory": {}, "dogpile": {"num_players": 2}}


def extractor(game: str, config: dict) -> DerivedFeatures:
    size = make_engine(game, **config).layout.size
    box = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
    return DerivedFeatures(box, game=game, env_config=config)


def derived(game: str, config: dict, obs: np.ndarray) -> np.ndarray:
    """The derived part only (the raw observation is passed through first)."""
    with torch.no_grad():
        out = extractor(game, config)(torch.as_tensor(obs[None]))[0].numpy()
    np.testing.assert_array_equal(out[:obs.size], obs)
    return out[obs.size:]


def test_features_games_are_the_memory_games() -> None:
    assert set(FEATURE_GAMES) == {"deluxe_memory", "mega_memory", "dogpile"} & set(GAMES)
    with pytest.raises(ValueError, match="roy has no derived policy features"):
        get_game("roy").features_builder()


def test_extractor_refuses_an_observation_space_of_another_size() -> None:
    box = gym.spaces.Box(0, 1, (7,), np.float32)
    with pytest.raises(ValueError, match="observes .* values"):
        DerivedFeatures(box, game="deluxe_memory", env_config={})


@pytest.mark.parametrize("game", FEATURE_GAMES)
def test_features_on_real_play_are_finite_and_batch_consistent(game: str) -> None:
    config = CONFIGS[game]
    engine = make_engine(game, **config)
    rng = np.random.default_rng(0)
    rows = []
    for g in range(3):
        engine.reset(seed=g)
        while not engine.done and len(rows) < 60 * (g + 1):
            rows.append(engine.observation(engine.current_player).copy())
            engine.step(int(rng.choice(np.flatnonzero(engine.legal_mask()))))
    obs = torch.as_tensor(np.stack(rows))
    net = extractor(game, config)
    with torch.no_grad():
        batch = net(obs)
        one = torch.cat([net(obs[i:i + 1]) for i in range(len(obs))])
    assert batch.shape == (len(rows), net.features_dim)
    assert torch.isfinite(batch).all()
    torch.testing.assert_close(batch, one)
    assert (batch[:, obs.shape[1]:] != 0).any(), "derived features never fire in play"


# -- Deluxe Memory -------------------------------------------------------------------------------
def test_deluxe_features_find_known_pairs_and_the_first_cards_mate() -> None:
    from card_envs.games.deluxe_memory.engine import CARD_FEAT, CARD_FEATURES, NUM_CELLS
    from card_envs.games.deluxe_memory.features import PER_CELL

    engine = make_engine("deluxe_memory", num_players=2)
    obs = np.zeros(engine.layout.size, np.float32)
    v = engine.layout.decode(obs)
    v["present"][:] = 1.0
    cards = v["cards"].reshape(NUM_CELLS, CARD_FEATURES)
    # 5S and 5C (both black) pair; 5H pairs with both by rank, in another colour; KD is alone.
    for cell, code in {10: "5S", 20: "5C", 30: "5H", 40: "KD"}.items():
        cards[cell] = CARD_FEAT[card_id(code)]
    v["first_pick"][30] = 1.0
    seen = v["seen_by"].reshape(2, NUM_CELLS)
    seen[1, [10, 20, 40, 50]] = 1.0  # the opponent has seen the 5S, 5C, KD and an unknown card
    seen[0, [10, 20, 30, 40]] = 1.0  # the observer's own looks: no bearing on either feature
    f = derived("deluxe_memory", {"num_players": 2}, obs).reshape(PER_CELL, NUM_CELLS)
    (known, unknown, has_mate, colour_mate, matches_first, same_colour, pair_value,
     seen_by_other, exposed) = f
    assert set(np.flatnonzero(known)) == {10, 20, 30, 40}
    assert unknown[0] == 1.0 and unknown[10] == 0.0
    assert set(np.flatnonzero(has_mate)) == {10, 20, 30}
    assert set(np.flatnonzero(colour_mate)) == {10, 20}
    assert set(np.flatnonzero(matches_first)) == {10, 20}  # not the first card itself
    assert not same_colour.any()  # the first card is red, its known mates black
    assert pair_value[10] == pytest.approx(5 / 13) and pair_value[40] == 0.0
    assert set(np.flatnonzero(seen_by_other)) == {10, 20, 40, 50}
    # It can match 5S with 5C; the 5H it has not seen; the KD has no known mate.
    assert set(np.flatnonzero(exposed)) == {10, 20}


def test_deluxe_exposed_pairs_need_one_player_to_have_seen_both_cards() -> None:
    from card_envs.games.deluxe_memory.engine import CARD_FEAT, CARD_FEATURES, NUM_CELLS
    from card_envs.games.deluxe_memory.features import PER_CELL

    config = {"num_players": 3}
    obs = np.zeros(make_engine("deluxe_memory", **config).layout.size, np.float32)
    v = make_engine("deluxe_memory", **config).layout.decode(obs)
    v["present"][:] = 1.0
    cards = v["cards"].reshape(NUM_CELLS, CARD_FEATURES)
    for cell, code in {10: "5S", 20: "5C", 30: "9D", 40: "9H"}.items():
        cards[cell] = CARD_FEAT[card_id(code)]
    seen = v["seen_by"].reshape(3, NUM_CELLS)
    seen[1, [10, 30, 40]] = 1.0  # the next player has seen one five and both nines
    seen[2, 20] = 1.0  # the one after it the other five
    f = derived("deluxe_memory", config, obs).reshape(PER_CELL, NUM_CELLS)
    assert set(np.flatnonzero(f[-2])) == {10, 20, 30, 40}
    assert set(np.flatnonzero(f[-1])) == {30, 40}


# -- Mega Mem-Ory --------------------------------------------------------------------------------
def test_mega_features_relate_the_first_card_to_side_centre_and_scored_cards() -> None:
    from card_envs.games.mega_memory.features import ENTITIES

    engine = make_engine("mega_memory")
    obs = np.zeros(engine.layout.size, np.float32)
    v = engine.layout.decode(obs)
    v["first_card"][card_id("7H")] = 1.0
    v["my_side"].reshape(4, 52)[2, card_id("7C")] = 1.0  # a match in side slot 3
    v["centre"].reshape(4, 52)[1, card_id("8H")] = 1.0  # a run in pile 2
    v["centre"].reshape(4, 52)[3, card_id("9H")] = 1.0  # two ranks up in pile 4
    v["my_scored"][card_id("7D")] = 1.0
    f = derived("mega_memory", {}, obs)
    known = f[:ENTITIES]
    # entity order: first, second, discard top, under it, side 1..4, centre 1..4
    assert set(np.flatnonzero(known)) == {0, 6, 9, 11}
    upper = list(zip(*np.triu_indices(ENTITIES, 1), strict=True))
    block = len(upper) + ENTITIES
    same_rank, run1, run2 = (f[ENTITIES + k * block:ENTITIES + (k + 1) * block] for k in range(3))
    pair = {name: dict(zip(upper, rel[:len(upper)], strict=True))
            for name, rel in (("rank", same_rank), ("run1", run1), ("run2", run2))}
    assert pair["rank"][(0, 6)] == 1.0 and pair["run1"][(0, 6)] == 0.0
    assert pair["run1"][(0, 9)] == 1.0 and pair["rank"][(0, 9)] == 0.0
    assert pair["run2"][(0, 11)] == 1.0 and pair["run1"][(9, 11)] == 1.0
    assert sum(pair["rank"].values()) == 1.0
    scored_rank = same_rank[len(upper):]
    assert scored_rank[0] == 1.0 and scored_rank[6] == 1.0 and scored_rank[9] == 0.0


# -- Dogpile -------------------------------------------------------------------------------------
def test_dogpile_loot_of_the_best_three_matches_the_heuristics() -> None:
    """The paws' loot, with one paw bone buried, and with one more bone: the heuristic's."""
    from card_envs.games.dogpile.engine import ENC
    from card_envs.games.dogpile.features import _paw_loot
    from card_envs.games.dogpile.heuristic import paw_value

    rng = np.random.default_rng(0)
    for ace_high in (False, True):
        for _ in range(400):
            suit, low = rng.integers(4), rng.integers(13)
            near = [suit * 13 + (low + d) % 13 for d in range(4)]
            near += [(suit + k) % 4 * 13 + low for k in range(1, 4)] + [52, 53]
            pool = near if rng.random() < 0.6 else list(range(54))
            cards = [int(c) for c in rng.choice(pool, size=rng.integers(0, 5), replace=False)]
            enc = np.zeros((4, ENC.shape[1]), np.float32)
            for i, c in enumerate(cards):
                enc[i] = ENC[c]
            bones = torch.as_tensor(enc)[None]
            paws, extra = bones[:, :3], bones[:, 3:]  # three paws, a candidate (or none)
            now, without, best = _paw_loot(paws[..., :14], paws[..., 14:], ace_high)
            loot = float(best(extra[..., :14], extra[..., 14:])[0, 0])
            assert loot == paw_value(cards, ace_high), (cards, ace_high)
            assert float(now[0]) == paw_value(cards[:3], ace_high), (cards, ace_high)
            for i in range(len(cards[:3])):
                rest = [c for k, c in enumerate(cards[:3]) if k != i]
                assert float(without[0, i]) == paw_value(rest, ace_high), (cards, i)


def test_dogpile_features_value_each_known_bone_for_the_paws() -> None:
    from card_envs.games.dogpile.engine import (
        BURY,
        DIG,
        DOWN,
        ENC,
        KEEP,
        NUM_SLOTS,
        SLOT_FEATURES,
        UP,
        WAIT,
    )
    from card_envs.games.dogpile.features import LOOT_SCALE, derived_features

    engine = make_engine("dogpile", num_players=2)
    obs = np.zeros(engine.layout.size, np.float32)
    v = engine.layout.decode(obs)
    paws = v["own_paws"].reshape(3, -1)
    for i, code in enumerate(("7S", "8S")):  # 15 now; a 9S makes a straight fetch
        paws[i, 0] = 1.0
        paws[i, 1:] = ENC[card_id(code)]
    pile = v["pile"].reshape(NUM_SLOTS, SLOT_FEATURES)
    pile[[3, 4, 5], 0] = 1.0  # slot 3 holds an unseen bone
    pile[4, 2:] = ENC[card_id("9S")]
    pile[5, 2:] = ENC[card_id("KH")]
    v["held"][0] = 1.0
    v["held"][1:ENC.shape[1] + 1] = ENC[card_id("7D")]
    v["round"][1] = 1.0  # round 2: 40 ticks, a tenth of them left
    v["time_left"][0] = 0.1
    f = derived("dogpile", {"num_players": 2}, obs)
    with torch.no_grad():
        glob, acts = derived_features(engine)(torch.as_tensor(obs[None]))
    glob, acts = glob[0].numpy(), acts[0].numpy()
    np.testing.assert_array_equal(f, np.concatenate([glob, acts.ravel()]))  # extractor layout
    unknown, value, gain = f[:NUM_SLOTS], f[NUM_SLOTS:2 * NUM_SLOTS], f[2 * NUM_SLOTS:3 * NUM_SLOTS]
    held_gain, paw_loss = glob[3 * NUM_SLOTS], glob[3 * NUM_SLOTS + 1:3 * NUM_SLOTS + 4]
    now, ticks = glob[3 * NUM_SLOTS + 4], glob[3 * NUM_SLOTS + 5]
    flags, best, reach = glob[-8:-2], glob[-2], glob[-1]
    assert set(np.flatnonzero(unknown)) == {3}
    assert value[4] == pytest.approx(9 / 13) and value[3] == 0.0
    assert gain[4] * LOOT_SCALE == pytest.approx(9 + 15)  # the bone and the straight fetch
    assert gain[5] * LOOT_SCALE == pytest.approx(13) and gain[3] == 0.0
    assert held_gain * LOOT_SCALE == pytest.approx(7)
    np.testing.assert_allclose(paw_loss * LOOT_SCALE, [7, 8, 0])
    assert now * LOOT_SCALE == pytest.approx(15)
    assert ticks * 60 == pytest.approx(4)  # counted against the longest round (60 ticks)
    np.testing.assert_array_equal(flags, [0, 0, 0, 1, 1, 1])  # "at most k ticks left"
    assert best * LOOT_SCALE == pytest.approx(24)
    assert reach == 1.0  # 7S 8S: a straight fetch is one bone away
    # Per action: kind one-hot, then unseen / best known bone (digs), gain in tens of loot
    # points (digs, keep, bury), feat in reach (keep) / cheapest paw bone (bury).
    kinds = acts[:, :6].argmax(1)
    assert kinds[DIG] == 0 and kinds[DOWN] == 1 and kinds[UP] == 2 and kinds[KEEP] == 3
    assert kinds[BURY] == 4 and kinds[WAIT] == 5 and (acts[:, :6].sum(1) == 1).all()
    digs = acts[DIG:DIG + NUM_SLOTS, 6:]
    assert set(np.flatnonzero(digs[:, 0])) == {3} and set(np.flatnonzero(digs[:, 1])) == {4}
    assert digs[4, 2] * 10 == pytest.approx(24) and digs[5, 2] * 10 == pytest.approx(13)
    np.testing.assert_allclose(acts[KEEP, 8:] * [10, 1], [7, 1])
    np.testing.assert_allclose(acts[BURY:BURY + 3, 8] * 10, [7, 8, 0], atol=1e-5)
    np.testing.assert_array_equal(acts[BURY:BURY + 3, 9], [1, 0, 0])  # 7S costs least
    assert not acts[DOWN:KEEP, 6:].any() and not acts[WAIT, 6:].any()


def test_dogpile_feat_in_reach_needs_a_pair_or_a_close_suit_pair() -> None:
    from card_envs.games.dogpile.engine import ENC
    from card_envs.games.dogpile.features import _feat_in_reach

    def reach(*codes: str) -> float:
        enc = np.zeros((4, ENC.shape[1]), np.float32)
        for i, code in enumerate(codes):
            enc[i] = ENC[card_id(code)]
        bones = torch.as_tensor(enc)[None]
        return float(_feat_in_reach(bones[..., :14], bones[..., 14:])[0])

    assert reach("7S", "7D") == 1.0 and reach("7S", "9S") == 1.0 and reach("7S", "10S") == 0.0
    assert reach("7S", "8D", "KH") == 0.0 and reach("7S") == 0.0


# -- the scored-actions policy -------------------------------------------------------------------
def _model(game: str, config: dict) -> object:
    from sb3_contrib import MaskablePPO

    from card_envs.agents.features import ScoredActionsPolicy
    from card_envs.core.gym_env import CardGymEnv

    torch.manual_seed(0)
    env = CardGymEnv(game, opponent="random", **config)
    kwargs = {"features_extractor_class": DerivedFeatures, "net_arch": [32],
              "features_extractor_kwargs": {"game": game, "env_config": config}}
    return MaskablePPO(ScoredActionsPolicy, env, n_steps=32, batch_size=32, seed=0,
                       policy_kwargs=kwargs)


def test_scored_actions_policy_is_the_plain_policy_without_action_features() -> None:
    policy = _model("deluxe_memory", {"num_players": 2}).policy
    assert type(policy.action_net) is torch.nn.Linear
    assert policy.action_net.in_features == 32


def test_scored_actions_head_adds_gated_action_features_and_survives_save_load(
        tmp_path: object) -> None:
    from sb3_contrib import MaskablePPO

    from card_envs.agents.features import ScoredActionHead

    model = _model("dogpile", {"num_players": 2})
    policy = model.policy
    head = policy.action_net
    assert isinstance(head, ScoredActionHead) and head.shape == (167, 10)
    trained = {id(p) for group in policy.optimizer.param_groups for p in group["params"]}
    assert {id(head.gate.weight), id(head.dense.weight)} <= trained
    engine = make_engine("dogpile", num_players=2)
    engine.reset(seed=1)
    obs = torch.as_tensor(engine.observation(engine.current_player)[None])
    with torch.no_grad():
        torch.nn.init.normal_(head.gate.weight)  # the 0.01 init hides the features' part
        features = policy.extract_features(obs, policy.pi_features_extractor)
        latent = policy.mlp_extractor.forward_actor(features)
        trunk_dim = policy.features_extractor.trunk_dim
        state, acts = latent[:, :32], features[:, trunk_dim:].reshape(1, 167, 10)
        expected = head.dense(state) + (acts * head.gate(state)[:, None, :]).sum(-1)
        torch.testing.assert_close(policy.action_net(latent), expected)
        assert not torch.equal(expected, head.dense(state))
    path = f"{tmp_path}/scored.zip"
    model.save(path)
    loaded = MaskablePPO.load(path)
    mask = engine.legal_mask().astype(bool)[None]
    with torch.no_grad():
        torch.testing.assert_close(
            loaded.policy.get_distribution(obs, action_masks=mask).distribution.logits,
            policy.get_distribution(obs, action_masks=mask).distribution.logits)
