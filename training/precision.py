"""bfloat16 for the learner's hidden layers (``training.precision: bfloat16``).

PPO's update and the warm start's cloning spend most of their time in the hidden layers' matrix
products over minibatches of about a thousand rows (docs/results.md, "Throughput"). bfloat16
halves that time on CPUs with AMX or AVX-512 BF16 and on GPUs. Only those products run in
bfloat16 (``torch.autocast`` around each hidden ``nn.Linear``); the activations, the action and
value heads, the log-probabilities, the losses and the optimizer's state stay float32, because
PPO clips a ratio of probabilities that bfloat16's 8-bit mantissa would blur. The rollouts,
the snapshot opponents, the evaluations and every saved policy stay float32: a policy trained
this way loads and plays like any other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, get_args

import torch
from sb3_contrib import MaskablePPO
from torch import nn

from .config import Precision

PRECISIONS: tuple[Precision, ...] = get_args(Precision)

#: ``torch.cpu.get_capabilities()``'s names for the instructions that compute bfloat16
#: natively: x86's AVX-512 BF16 and AMX-BF16, Arm's BF16 and SVE BF16.
NATIVE_BFLOAT16 = ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16")


def cpu_bfloat16_instructions() -> list[str] | None:
    """This CPU's instructions that compute bfloat16 natively (``[]``: none, and torch emulates
    bfloat16, 5 to 9 times slower than float32 here, docs/training.md); ``None`` where torch
    cannot say (a torch without ``torch.cpu.get_capabilities``)."""
    capabilities = getattr(torch.cpu, "get_capabilities", None)
    if capabilities is None:
        return None
    found = capabilities()
    return [name for name in NATIVE_BFLOAT16 if found.get(name)]


def hidden_linears(policy: nn.Module) -> list[nn.Linear]:
    """The policy's hidden ``nn.Linear`` layers: every one inside its ``mlp_extractor`` (SB3's
    trunk, also the trunk of :class:`~card_envs.agents.features.ScoredActionsPolicy`), none of
    its heads."""
    trunk = getattr(policy, "mlp_extractor", None)
    if not isinstance(trunk, nn.Module):
        raise TypeError(f"{type(policy).__name__} has no mlp_extractor: not an SB3 "
                        "actor-critic policy")
    return [m for m in trunk.modules() if isinstance(m, nn.Linear)]


def _bfloat16_forward(layer: nn.Linear) -> Any:
    def forward(x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            out = nn.functional.linear(x, layer.weight, layer.bias)
        return out.float()  # the activation after it, and everything downstream, in float32
    return forward


@contextlib.contextmanager
def hidden_layers_in(precision: Precision, policy: nn.Module) -> Iterator[None]:
    """Within the block, ``policy``'s hidden layers compute in ``precision`` (float32: as
    they are). The weights stay float32 and are not touched; the layers are as before after
    the block, an exception included."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision: expected one of {', '.join(PRECISIONS)}, got "
                         f"{precision!r}")
    # A layer already in bfloat16 (a block inside another) is left to the outer block.
    layers = ([m for m in hidden_linears(policy) if "forward" not in vars(m)]
              if precision == "bfloat16" else [])
    for layer in layers:
        # An instance attribute shadows nn.Linear.forward for this layer only; it is no
        # parameter or buffer, so state_dict() and saved policies do not see it.
        layer.forward = _bfloat16_forward(layer)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for layer in layers:
            del layer.forward


class BFloat16MaskablePPO(MaskablePPO):
    """MaskablePPO whose update (``train()``) runs the hidden layers in bfloat16; its rollouts
    and everything it saves are float32, and ``MaskablePPO.load`` reads what it saves."""

    def train(self) -> None:
        with hidden_layers_in("bfloat16", self.policy):
            super().train()


def learner_class(precision: Precision) -> type[MaskablePPO]:
    """The MaskablePPO class that trains in ``precision``."""
    return BFloat16MaskablePPO if precision == "bfloat16" else MaskablePPO
