"""The docs page's RLlib config (docs/libraries/rllib.md) driving RLlib's own
``MultiAgentEnvRunner`` in this process (``make test-rllib``; skipped without Ray; no Ray
cluster): the masked module and the heuristic opponent module both act, the heuristic inside
the EnvRunner, and no move the env receives is illegal."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("ray.rllib")

from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner  # noqa: E402

from tests.libraries.snippets import run, snippet  # noqa: E402


def test_env_runner_samples_masked_module_against_heuristic() -> None:
    namespace = run(snippet("rllib"))
    config = namespace["config"].debugging(seed=0)
    runner = MultiAgentEnvRunner(config=config)
    try:
        episodes = runner.sample(num_timesteps=256, random_actions=False)
        assert sum(len(e) for e in episodes) >= 256
        modules: set[str] = set()
        for episode in episodes:
            for agent in episode.agent_ids:
                modules.add(episode.module_for(agent))
                infos: list[dict[str, Any]] = episode.get_infos(agent_ids=agent,
                                                                env_steps=False)[agent]
                assert not any(info.get("illegal_action") for info in infos), agent
        assert modules == {"main", "heuristic"}
    finally:
        runner.stop()
