"""Adapters for RL libraries whose conventions need one; each module is imported only when used.

* :mod:`card_envs.adapters.tianshou`: every seat's rewards on that seat's own transitions, and a
  closing turn for each seat, as Tianshou's multi-agent dispatcher needs.
* :mod:`card_envs.adapters.agilerl`: the turn-based games as PettingZoo Parallel envs with the
  action mask in ``info``, as AgileRL's multi-agent algorithms read it.
* :mod:`card_envs.adapters.supersuit`: Stable-Baselines3 over SuperSuit's vector envs, with the
  ``action_masks`` route sb3-contrib's MaskablePPO calls.
* :mod:`card_envs.adapters.rllib`: every game as a Ray RLlib ``MultiAgentEnv`` that pays each
  seat on its own transitions (terminal rewards included); :mod:`card_envs.adapters.rllib_module`:
  the masked PPO RLModule (the SB3 trainer's network), random/heuristic opponent modules, and
  the export to a MaskablePPO ``.zip``.

TorchRL needs none: ``PettingZooWrapper(env, use_mask=True)`` takes the envs as they are
(docs/libraries/torchrl.md).
"""
