"""training/precision.py: bfloat16 for the hidden layers only, and nothing left behind."""

from __future__ import annotations

import pytest
import torch
from sb3_contrib import MaskablePPO
from torch import nn

from training.config import ConfigError, from_dict
from training.precision import BFloat16MaskablePPO, hidden_layers_in, hidden_linears, learner_class
from training.selfplay import SelfPlayVecEnv
from training.train import policy_class, ppo_arguments


def _model(game: str, features: str = "raw") -> MaskablePPO:
    cfg = from_dict({"game": game, "features": features,
                     "ppo": {"n_steps": 16, "batch_size": 64,
                             "policy_kwargs": {"net_arch": [32, 32]}}})
    env = SelfPlayVecEnv(game, {}, 4, {"random": 1.0}, seed=0)
    return MaskablePPO(policy_class(cfg), env, seed=0, **ppo_arguments(cfg))


def _observations(model: MaskablePPO, rows: int = 64) -> torch.Tensor:
    torch.manual_seed(0)
    space = model.observation_space
    return (torch.rand(rows, *space.shape) < 0.2).float()  # type: ignore[misc]


@pytest.mark.parametrize("game, features", [("roy", "raw"), ("dogpile", "derived")])
def test_only_the_trunk_s_linear_layers_are_hidden(game: str, features: str) -> None:
    """Every Linear of the MLP trunk (both towers), none of the heads: Dogpile's scored-actions
    head (its dense and gate layers) stays float32 like SB3's dense heads."""
    policy = _model(game, features).policy
    hidden = hidden_linears(policy)
    trunk = {id(m) for m in policy.mlp_extractor.modules() if isinstance(m, nn.Linear)}
    heads = {id(m) for head in (policy.action_net, policy.value_net) for m in head.modules()
             if isinstance(m, nn.Linear)}
    assert {id(m) for m in hidden} == trunk and len(hidden) == 4  # [32, 32], two towers
    assert heads and not heads & trunk
    with pytest.raises(TypeError, match="no mlp_extractor"):
        hidden_linears(nn.Linear(2, 2))


@pytest.mark.parametrize("game, features", [("roy", "raw"), ("dogpile", "derived")])
def test_the_hidden_layers_compute_in_bfloat16_and_the_rest_in_float32(
        game: str, features: str) -> None:
    policy = _model(game, features).policy
    obs = _observations(policy)  # type: ignore[arg-type]
    features_in = policy.extract_features(obs, policy.pi_features_extractor)
    first = hidden_linears(policy)[0]
    trunk_in = features_in[:, :first.in_features]
    expected = (trunk_in.bfloat16() @ first.weight.bfloat16().T + first.bias.bfloat16()).float()
    with torch.no_grad():
        exact = policy.evaluate_actions(obs, torch.zeros(len(obs)))
        with hidden_layers_in("bfloat16", policy):
            assert torch.equal(first(trunk_in), expected)
            assert first(trunk_in).dtype == torch.float32  # the activation after it: float32
            values, log_prob, entropy = policy.evaluate_actions(obs, torch.zeros(len(obs)))
            logits = policy.action_net(policy.mlp_extractor.forward_actor(features_in))
    assert values.dtype == log_prob.dtype == entropy.dtype == logits.dtype == torch.float32
    # Close to the float32 forward pass, and not equal to it: bfloat16 did the products.
    assert torch.allclose(values, exact[0], atol=0.05)
    assert not torch.equal(values, exact[0])


def test_the_layers_are_as_before_after_the_block_and_after_an_error() -> None:
    policy = _model("roy").policy
    obs = _observations(policy)  # type: ignore[arg-type]
    state = {k: v.clone() for k, v in policy.state_dict().items()}
    with torch.no_grad():
        before = policy.predict_values(obs)
        with hidden_layers_in("bfloat16", policy):
            assert policy.state_dict().keys() == state.keys()  # nothing saved would differ
            inside = policy.predict_values(obs)
        with pytest.raises(RuntimeError, match="inside"), hidden_layers_in("bfloat16", policy):
            raise RuntimeError("inside")
        after = policy.predict_values(obs)
    assert not torch.equal(inside, before) and torch.equal(after, before)
    assert all("forward" not in vars(m) for m in hidden_linears(policy))
    assert all(torch.equal(v, state[k]) for k, v in policy.state_dict().items())
    with hidden_layers_in("float32", policy), torch.no_grad():
        assert torch.equal(policy.predict_values(obs), before)
    with hidden_layers_in("bfloat16", policy), torch.no_grad():  # one block inside another
        with hidden_layers_in("bfloat16", policy):
            pass
        assert torch.equal(policy.predict_values(obs), inside)  # still bfloat16 after the inner


def test_an_unknown_precision_is_refused_naming_the_choices() -> None:
    policy = _model("roy").policy
    with pytest.raises(ValueError, match=r"expected one of float32, bfloat16, got 'float16'"), \
            hidden_layers_in("float16", policy):  # type: ignore[arg-type]
        pass


def test_the_learner_class_trains_in_bfloat16_and_rolls_out_in_float32() -> None:
    """``train()`` (the update) in bfloat16; the rollouts and ``predict`` in float32 (the old
    log-probabilities PPO's ratio divides by are float32's)."""
    assert learner_class("float32") is MaskablePPO
    assert learner_class("bfloat16") is BFloat16MaskablePPO
    model = _model("roy")
    seen: list[bool] = []  # per forward pass of the first hidden layer: in bfloat16?
    bf16 = BFloat16MaskablePPO(model.policy.__class__, model.env, seed=0, n_steps=16,
                               batch_size=64, n_epochs=1, policy_kwargs={"net_arch": [32, 32]})
    layer = hidden_linears(bf16.policy)[0]
    layer.register_forward_pre_hook(lambda m, _: seen.append("forward" in vars(m)))
    bf16.learn(64)
    rollout, update = 64 // 4, 64 // 64  # 16 steps of 4 envs; one epoch of one minibatch
    assert seen[:rollout] == [False] * rollout
    assert seen[rollout:rollout + update] == [True] * update
    assert "forward" not in vars(layer)


@pytest.mark.parametrize("data, message", [
    ({"game": "roy", "training": {"precision": "float16"}},
     r"training.precision: .*'float32'.*'bfloat16'"),
    ({"game": "roy", "backend": "rllib", "training": {"precision": "bfloat16"}},
     r"training.precision: not supported with backend: rllib"),
])
def test_the_config_refuses_a_precision_it_cannot_train(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_dict(data)


def test_cloning_in_bfloat16_repeats_and_differs_from_float32() -> None:
    """The warm start's gradient steps in bfloat16 (``pretrain(precision=...)``): one seed
    gives one policy; float32 gives another. Its accuracies are measured in float32."""
    from training.pretrain import behaviour_clone, collect

    data = collect("roy", {"num_players": 2}, games=6, max_decisions=2_000, seed=0)

    def cloned(precision: str) -> dict[str, torch.Tensor]:
        model = _model("roy")
        behaviour_clone(model, data, epochs=1, batch_size=256, learning_rate=1e-3, seed=0,
                        precision=precision)  # type: ignore[arg-type]
        assert all("forward" not in vars(m) for m in hidden_linears(model.policy))
        return model.policy.state_dict()

    first, again, full = cloned("bfloat16"), cloned("bfloat16"), cloned("float32")
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not all(torch.equal(first[k], full[k]) for k in first)
