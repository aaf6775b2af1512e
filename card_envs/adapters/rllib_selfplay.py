"""The Ray side of league self-play on RLlib: what runs in the Learner and the EnvRunners
besides the modules (:mod:`card_envs.adapters.rllib_league` seats them). Imports Ray.

In the package, not the trainer, because RLlib pickles these into its actors, which import them
by name on whichever node they run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.connectors.connector_v2 import ConnectorV2

from card_envs.adapters.rllib_league import LEARNER, opponent_kind


class LearnerOnly(ConnectorV2):
    """Our first learner connector: keeps only the learner's single-agent episodes, so the
    opponents' samples (fixed agents and frozen snapshots, never trained) are neither batched
    nor valued (RLlib's GAE connector otherwise computes values over every module's rows).
    PPO's own first piece (``AddOneTsToEpisodesAndTruncate``) has already put their loss
    masks into the batch, keyed ``(episode, agent, module)``: those go too."""

    def __call__(self, *, rl_module: Any, batch: dict[str, Any], episodes: list[Any],
                 explore: bool | None = None, shared_data: dict[str, Any] | None = None,
                 **kwargs: Any) -> Any:
        for episode in episodes:
            drop = [aid for aid, sa in episode.agent_episodes.items() if sa.module_id != LEARNER]
            for aid in drop:
                del episode.agent_episodes[aid]
        for column in batch.values():
            if isinstance(column, dict):
                for key in [k for k in column if isinstance(k, tuple) and k[-1] != LEARNER]:
                    del column[key]
        return batch


class LeagueMetrics(RLlibCallback):
    """Per finished episode, in the EnvRunner: the learner's win (a tie's share) against the
    opponent kind it met (``win_vs_self`` / ``win_vs_random`` / ``win_vs_heuristic`` /
    ``win_vs_mixed``) and a count of the games each module played (``league/<module>``)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, env: Any = None,
                       **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        seats = {aid: episode.module_for(aid) for aid in episode.agent_episodes}
        for module in seats.values():
            metrics_logger.log_value(("league", module), 1, reduce="sum")
        learner = [aid for aid, m in seats.items() if m == LEARNER]
        if not learner:
            return
        infos = episode.agent_episodes[learner[0]].get_infos(-1)
        winners = np.flatnonzero(np.asarray(infos.get("winners", []), dtype=bool))
        seat = int(str(learner[0]).rsplit("_", 1)[-1])
        win = 1.0 / len(winners) if seat in winners else 0.0
        kinds = {opponent_kind(m) for a, m in seats.items() if a != learner[0]}
        kind = kinds.pop() if len(kinds) == 1 else "mixed"
        metrics_logger.log_value(f"win_vs_{kind}", win, reduce="mean", window=500)
