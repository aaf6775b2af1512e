"""Ray RLlib, for real (``make test-rllib`` runs this in a virtualenv with ``ray[rllib]``; a
run without Ray skips it): the adapter on every game, checked against the PettingZoo env it
adapts and through RLlib's own ``MultiAgentEpisode``; the masked module; its export played
without Ray. None of these starts a Ray cluster (tests/libraries/test_rllib_cluster.py does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402
from ray.rllib.utils.torch_utils import FLOAT_MIN  # noqa: E402

from card_envs.adapters.rllib import SimultaneousEnv, TurnBasedEnv, env_creator  # noqa: E402
from card_envs.adapters.rllib_module import export_maskable_ppo, module_spec  # noqa: E402
from card_envs.core.aec_env import CardAECEnv  # noqa: E402
from card_envs.games import GAMES, make_engine  # noqa: E402

GAME_NAMES = list(GAMES)
#: Short episodes, score rewards where a game has them (points paid on others' moves), and
#: a step cap that truncates some episodes.
CONFIG: dict[str, dict[str, Any]] = {
    "roy": {},
    "memory_uno": {"reward": "score"},
    "mega_memory": {},
    "deluxe_memory": {"num_players": 2},
    "dogpile": {"reward": "score", "ticks_per_second": 1, "round_seconds": (4, 3, 2)},
}
EPISODES = 6


def _random_action(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    assert legal.size, "a seat to act was given no legal action"
    return int(rng.choice(legal))


def _play_alongside(game: str, seed: int, max_steps: int | None = None,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One random episode of the RLlib env, the plain AEC env stepped with the same actions.
    Every observation is checked against the AEC env's; returns both ledgers and RLlib's
    episode built from the adapter's output."""
    options = dict(CONFIG[game] if options is None else options)
    if max_steps is not None:
        options["max_steps"] = max_steps
    env = TurnBasedEnv({"game": game, "env": options})
    aec = CardAECEnv(make_engine(game, **options))
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    aec.reset(seed=seed)
    episode = MultiAgentEpisode(observation_space=env.observation_spaces,
                                action_space=env.action_spaces)
    episode.add_env_reset(observations=obs, infos=infos)
    paid = dict.fromkeys(env.possible_agents, 0.0)  # what the AEC env paid, summed
    delivered = dict.fromkeys(env.possible_agents, 0.0)  # what the adapter returned, summed
    acted: set[str] = set()
    while True:
        live = [a for a in obs if not aec.terminations[a] and not aec.truncations[a]]
        # PettingZoo's turn order: exactly the AEC env's agent_selection observes.
        assert live == [aec.agent_selection], (obs.keys(), aec.agent_selection)
        agent = live[0]
        np.testing.assert_array_equal(obs[agent]["observation"],
                                      aec.observe(agent)["observation"])
        mask = obs[agent]["action_mask"]
        np.testing.assert_array_equal(mask.astype(bool), aec.engine.legal_mask())
        action = _random_action(obs[agent], rng)
        acted.add(agent)
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        aec.step(action)
        for a, r in aec.rewards.items():
            paid[a] += r
        while aec.agents and (aec.terminations[aec.agent_selection]
                              or aec.truncations[aec.agent_selection]):
            aec.step(None)
            for a, r in aec.rewards.items():
                paid[a] += r
        for a, r in rewards.items():
            delivered[a] += r
        assert set(rewards) == set(obs) and set(infos) <= set(obs)
        episode.add_env_step(observations=obs, actions={agent: action}, rewards=rewards,
                             infos=infos, terminateds=terms, truncateds=truncs)
        if terms["__all__"] or truncs["__all__"]:
            break
    return {"env": env, "aec": aec, "obs": obs, "terms": terms, "truncs": truncs,
            "paid": paid, "delivered": delivered, "acted": acted, "episode": episode}


@pytest.mark.parametrize("game", GAME_NAMES)
def test_turn_based_every_seat_paid(game: str) -> None:
    """Each seat that acted receives, summed, exactly what the AEC env paid it, the terminal
    reward included; RLlib's MultiAgentEpisode credits all of it to the seat's own actions."""
    truncated = 0
    for seed in range(EPISODES):
        cap = 6 if seed % 3 == 2 else None  # some episodes end by the step cap
        run = _play_alongside(game, seed, max_steps=cap)
        aec, obs = run["aec"], run["obs"]
        assert aec.engine.done and not aec.agents
        truncated += bool(run["truncs"]["__all__"])
        assert run["terms"]["__all__"] != run["truncs"]["__all__"]
        # Every seat that acted gets its final observation, mask all ones (nothing decides).
        assert set(obs) == run["acted"]
        for o in obs.values():
            assert o["action_mask"].all()
        for a in run["acted"]:
            assert run["delivered"][a] == pytest.approx(run["paid"][a])
        episode = run["episode"]
        assert episode.is_done
        for a in run["acted"]:
            sa = episode.agent_episodes[a]
            assert sa.is_done
            assert sa.get_return() == pytest.approx(run["paid"][a]), a
            # the terminal reward sits on the seat's last own transition
            assert len(sa.get_actions()) == len(sa.get_rewards())
    assert truncated, "no episode was truncated: the truncation path went untested"


@pytest.mark.parametrize("game", GAME_NAMES)
def test_loser_gets_terminal_reward(game: str) -> None:
    """A decided game pays its loser a negative final reward on its last transition, though the
    loser never moves again (the stock PettingZooEnv drops it). Win/lose rewards."""
    for seed in range(20):
        run = _play_alongside(game, seed, options={})
        if run["terms"]["__all__"] and run["aec"].engine.winners:
            losers = [a for a in run["acted"]
                      if run["env"].possible_agents.index(a) not in run["aec"].engine.winners]
            if not losers:
                continue
            sa = run["episode"].agent_episodes[losers[0]]
            assert run["paid"][losers[0]] < 0
            assert sa.get_rewards()[-1] == run["paid"][losers[0]]
            return
    pytest.fail("no decided game with a loser that acted in 20 seeds")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_rllib_env_checker(game: str) -> None:
    """RLlib's own multi-agent env checks (what an EnvRunner runs on start) pass."""
    check_multiagent_environments(TurnBasedEnv({"game": game, "env": CONFIG[game]}))


def test_dogpile_simultaneous() -> None:
    """Dogpile through its Parallel env: every dog observes each tick; the rewards summed are
    those of the Parallel env stepped alike; RLlib's checker and episode accept it."""
    env = env_creator({"game": "dogpile", "env": CONFIG["dogpile"], "parallel": True})
    assert isinstance(env, SimultaneousEnv)
    check_multiagent_environments(env)
    from card_envs.dogpile_v1 import parallel_env

    for seed in range(3):
        par = parallel_env(**CONFIG["dogpile"])
        rng = np.random.default_rng(seed)
        obs, infos = env.reset(seed=seed)
        pobs, _ = par.reset(seed=seed)
        episode = MultiAgentEpisode(observation_space=env.observation_spaces,
                                    action_space=env.action_spaces)
        episode.add_env_reset(observations=obs, infos=infos)
        paid = dict.fromkeys(env.possible_agents, 0.0)
        while True:
            assert set(obs) == set(par.agents) == set(env.possible_agents)
            actions = {a: _random_action(o, rng) for a, o in obs.items()}
            obs, rewards, terms, truncs, infos = env.step(actions)
            _, prew, *_ = par.step(actions)
            assert rewards == prew
            for a, r in rewards.items():
                paid[a] += r
            episode.add_env_step(observations=obs, actions=actions, rewards=rewards,
                                 infos=infos, terminateds=terms, truncateds=truncs)
            if terms["__all__"] or truncs["__all__"]:
                break
        for a in env.possible_agents:
            assert episode.agent_episodes[a].get_return() == pytest.approx(paid[a])


def test_bad_config_is_named() -> None:
    with pytest.raises(ValueError, match="unknown RLlib env config keys"):
        TurnBasedEnv({"game": "roy", "evn": {}})
    with pytest.raises(ValueError, match="unknown game"):
        TurnBasedEnv({"game": "chess"})
    with pytest.raises(ValueError, match="no Parallel env"):
        SimultaneousEnv({"game": "roy"})
    env = TurnBasedEnv({"game": "roy"})
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="the seat to act"):
        env.step({"player_0": 0, "player_1": 0})


def _module(game: str, features: str) -> Any:
    env = TurnBasedEnv({"game": game, "env": CONFIG[game]})
    spec = module_spec(game, CONFIG[game], features=features)
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    return env, spec.build()


def _batch(env: TurnBasedEnv, n: int) -> dict[str, torch.Tensor]:
    rng = np.random.default_rng(0)
    rows = []
    obs, _ = env.reset(seed=0)
    while len(rows) < n:
        (agent, o), = obs.items()
        rows.append(o)
        obs, _, terms, truncs, _ = env.step({agent: _random_action(o, rng)})
        if terms["__all__"] or truncs["__all__"]:
            obs, _ = env.reset(seed=len(rows))
    return {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in rows[0]}


@pytest.mark.parametrize("game,features", [(g, "raw") for g in GAME_NAMES]
                         + [(g, "derived") for g in GAME_NAMES if GAMES[g].features])
def test_module_masks_and_values(game: str, features: str) -> None:
    """Illegal actions get FLOAT_MIN logits (zero probability) in every forward pass; values
    are one per row and come from the SB3 policy's value head."""
    env, module = _module(game, features)
    obs = _batch(env, 64)
    mask = obs["action_mask"].bool()
    for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
        logits = forward({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        assert (logits[~mask] == FLOAT_MIN).all()
        assert (logits[mask] > FLOAT_MIN).all()
        probs = torch.softmax(logits, -1)
        assert (probs[~mask] == 0).all()
    values = module.compute_values({Columns.OBS: obs})
    assert values.shape == (64,)
    policy = module.policy
    with torch.no_grad():
        expected = policy.predict_values(obs["observation"]).squeeze(-1)
    torch.testing.assert_close(values.detach(), expected)


@pytest.mark.parametrize("game,features", [(g, "raw") for g in GAME_NAMES]
                         + [(g, "derived") for g in GAME_NAMES if GAMES[g].features])
def test_module_makes_every_tensor_on_its_device(game: str, features: str) -> None:
    """The SB3 trainer's device check (tests/test_device.py) for the RLlib module: with the
    batch on the module's device, as RLlib's learner and EnvRunners put it, no forward pass,
    value or backward pass meets a tensor made on the host (which fails on a GPU)."""
    from tests.device_guard import DeviceGuard

    env, module = _module(game, features)
    obs = _batch(env, 32)
    with DeviceGuard(module) as guard:
        batch = {Columns.OBS: {k: v.to("cpu") for k, v in obs.items()}}
        for forward in (module.forward_inference, module.forward_exploration):
            forward(batch)
        out = module.forward_train(batch)
        values = module.compute_values(batch, embeddings=out[Columns.EMBEDDINGS])
        logits = out[Columns.ACTION_DIST_INPUTS]
        legal = batch[Columns.OBS]["action_mask"].bool()
        loss = -torch.where(legal, torch.log_softmax(logits, -1), 0.0).sum() + values.pow(2).mean()
        loss.backward()
        assert module.compute_values(batch).shape == (32,)
    assert guard.checked > 20  # it did watch the module at work
    assert all(p.grad is not None for p in module.policy.action_net.parameters())


def test_export_plays_without_ray(tmp_path: Any) -> None:
    """The exported .zip gives the module's own logits, and training.evaluate plays it
    against random in a process where importing Ray fails."""
    game = "roy"
    env, module = _module(game, "raw")
    with torch.no_grad():  # weights the export must carry (not the init's)
        for p in module.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    path = tmp_path / "rllib_policy.zip"
    export_maskable_ppo(module, path)
    obs = _batch(env, 32)
    from card_envs.agents.policy import load_maskable_ppo

    model = load_maskable_ppo(path)
    with torch.no_grad():
        dist = model.policy.get_distribution(obs["observation"],
                                             action_masks=obs["action_mask"].numpy())
        expected = module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    np.testing.assert_allclose(torch.softmax(dist.distribution.logits, -1).numpy(),
                               torch.softmax(expected, -1).numpy(), atol=1e-6)
    script = (
        "import sys; sys.modules['ray'] = None\n"  # any `import ray` now raises ImportError
        "import training\n"  # the checkout's name makes card_envs.training importable (conftest)
        "from card_envs.training.evaluate import evaluate\n"
        f"r = evaluate({game!r}, [{str(path)!r}, 'random'], games=20, seed=0, parallel=4)\n"
        "m = r['matches'][0]; print('games', m['games']); assert m['games'] == 20\n"
        "assert 'ray' not in {k.split('.')[0] for k, v in sys.modules.items() if v}\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "CARD_ENVS_PURE_PYTHON": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "games 20" in out.stdout
