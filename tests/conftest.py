from __future__ import annotations

import warnings

import pytest

# Before anything imports card_envs.training: this checkout's training/ is the trainer the
# tests run (training/_checkout.py), also in a copy of the repository (the mutation audit's)
# whose environment has another checkout installed in editable mode.
import training  # noqa: F401
from card_envs.games import GAMES


def game_variants() -> list[tuple[str, dict]]:
    """(game, config) pairs the shared API tests run: each supported player count, plus each
    game's own list of variants (``TEST_VARIANTS`` on the engine class)."""
    out: list[tuple[str, dict]] = []
    for name, spec in GAMES.items():
        cls = spec.engine_class()
        counts = cls.OPTIONS["num_players"].choices if "num_players" in cls.OPTIONS else (2,)
        for n in counts or (2,):
            out.append((name, {"num_players": n}) if "num_players" in cls.OPTIONS else (name, {}))
        for extra in getattr(cls, "TEST_VARIANTS", ()):
            out.append((name, dict(extra)))
    return out


VARIANTS = game_variants()
VARIANT_IDS = [f"{g}-" + "-".join(f"{k}={v}" for k, v in c.items()) for g, c in VARIANTS]


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_pytest_tmp(tmp_path_factory: pytest.TempPathFactory):
    """SB3's ``learn()`` without a logger makes an empty ``SB3-<time>`` folder in the system temp
    directory each call; tests that call it leave theirs with pytest's temporary files."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture(autouse=True)
def _quiet_known_warnings():
    with warnings.catch_warnings():
        # api_test's generic advice for Dict observations; PettingZoo's classic envs get it too.
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        yield
