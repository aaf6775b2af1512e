"""TorchRL, for real (``make test-marl`` runs this in a virtualenv with TorchRL installed; the
default test run skips it): ``check_env_specs`` and a masked rollout of every game through
``PettingZooWrapper``, as docs/libraries/torchrl.md shows it; no row of any mask it yields is
all false, so its masked distributions never sample NaN."""

from __future__ import annotations

import pytest

pytest.importorskip("torchrl")

import torch  # noqa: E402
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import MaskedCategorical  # noqa: E402

from card_envs.games import GAMES  # noqa: E402
from tests.libraries.snippets import env_module, for_game, run, snippet  # noqa: E402

GAME_NAMES = list(GAMES)
#: Episodes short enough that random play ends several in one rollout.
SHORT = {"memory_uno": {}, "deluxe_memory": {"num_players": 2},
         "dogpile": {"ticks_per_second": 1, "round_seconds": (4, 3, 2)}}


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """Random actions (``full_action_spec.rand()``, ``MaskedCategorical.sample``) draw from
    torch's global stream. Unseeded, each run played other games, and a random Deluxe Memory
    game now and then outlasted a 600-step rollout: the episode count failed by chance."""
    torch.manual_seed(0)


def _check_rollout(rollout, groups) -> int:
    """:func:`_check_group` for every group; the episodes that ended."""
    for group in groups:
        _check_group(rollout, group)
    return int(rollout.get(("next", "done")).sum())


def _check_group(rollout, group: str) -> None:
    """Every action legal under its mask, no empty mask row (now or next), and a masked
    distribution over each mask samples a real action."""
    for key in ((group, "action_mask"), ("next", group, "action_mask")):
        masks = rollout.get(key)
        assert masks.any(-1).all(), f"an all-false row in {key}"
        dist = MaskedCategorical(logits=torch.zeros(masks.shape), mask=masks)
        sample = dist.sample()
        assert masks.gather(-1, sample.unsqueeze(-1)).all()
    masks = rollout.get((group, "action_mask"))
    actions = rollout.get((group, "action"))
    acting = rollout.get((group, "mask"))
    chosen = masks.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    assert chosen[acting].all()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_page_s_snippet_runs_every_game(game: str) -> None:
    ns = run(for_game(snippet("torchrl"), game))
    _check_rollout(ns["rollout"], [ns["group"]])


@pytest.mark.parametrize("game", GAME_NAMES)
def test_random_masked_rollouts_cross_episode_ends(game: str) -> None:
    """``rollout`` without a policy samples ``full_action_spec.rand()`` under the mask (it
    raised on an all-false row); several episodes end and reset inside one rollout."""
    env = PettingZooWrapper(env_module(game).env(**SHORT.get(game, {})), use_mask=True,
                            categorical_actions=True, seed=1)
    rollout = env.rollout(600, break_when_any_done=False)
    assert _check_rollout(rollout, env.group_map) >= 1


def test_dogpile_parallel_env() -> None:
    env = PettingZooWrapper(
        env_module("dogpile").parallel_env(**SHORT["dogpile"]),
        use_mask=True, categorical_actions=True, seed=0)
    check_env_specs(env)
    rollout = env.rollout(200, break_when_any_done=False)
    assert _check_rollout(rollout, env.group_map) >= 1
