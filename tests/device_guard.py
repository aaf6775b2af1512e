"""Catch tensors made on the wrong device, on a machine with only a CPU.

A GPU run fails when a forward pass, a rollout or a training step mixes a tensor on the model's
device with one on the host ("Expected all tensors to be on the same device"). On a CPU-only
machine both are the CPU, so nothing fails there. :class:`DeviceGuard` stands in for a second
device: every tensor it knows to be "on the model's device" is marked, and the mark follows the
computation. Marked from the start: every ``nn.Parameter`` (a model's weights live on its
device; their gradients and optimizer state follow) and the buffers of the modules it guards.
A tensor is marked when it is made with an explicit ``device=`` equal to the model's, moved
there with ``.to(device)``, made ``*_like`` a marked one, or computed from a marked one. A
device read off a tensor (``obs.device``) is that tensor's: ``.to(obs.device)`` marks the
result only if ``obs`` is marked. A tensor is unmarked (on the host) when made without a
device (``torch.zeros(n)``, a module-level constant, ``torch.as_tensor(array)``) or moved with
``.cpu()``. An operation that takes marked and unmarked tensors (other than 0-dim ones, which
torch lets cross devices, and an explicit ``copy_``) raises :class:`DeviceMismatch`, as CUDA
would; ``.numpy()`` on a marked tensor raises as CUDA does ("can't convert cuda tensor to
numpy"). A cache keyed by device hides a table made on the wrong device (both devices are
the CPU here): the package's features copy their tables per call instead.

The rule is stricter than CUDA in one place: writing a host tensor into a device tensor with
``t[i] = host`` works on CUDA (a copy), but is flagged here; it is the same mistake one step
removed (the host constant was made on the wrong device).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

_FACTORIES = {torch.zeros, torch.ones, torch.empty, torch.full, torch.tensor, torch.as_tensor,
              torch.arange, torch.linspace, torch.eye, torch.rand, torch.randn, torch.randint,
              torch.randperm, torch.triu_indices, torch.tril_indices, torch.from_numpy}
_TO_HOST = {torch.Tensor.cpu}
_NUMPY = {torch.Tensor.numpy}
_CROSS_DEVICE_OK = {torch.Tensor.copy_, torch.Tensor.to, torch.Tensor.cpu}
_DEVICE_OF = torch.Tensor.device.__get__  # type: ignore[attr-defined]


class DeviceMismatch(AssertionError):
    """Marked (model-device) and unmarked (host) tensors met in one operation."""


class DeviceGuard(TorchFunctionMode):
    """Within ``with DeviceGuard(module, ...)``: flag host tensors meeting the modules' own.

    ``device`` is the modules' device (the CPU on a test machine): a ``device=`` or ``.to()``
    naming it marks the result."""

    def __init__(self, *modules: torch.nn.Module, device: str | torch.device = "cpu") -> None:
        """``modules``: ones whose buffers are on the device too (parameters always are)."""
        super().__init__()
        self.device = torch.device(device)
        # By id, each with a weak reference (a WeakSet compares tensors with ==, elementwise).
        self._marked: dict[int, weakref.ref[torch.Tensor]] = {}
        self.checked = 0  # operations that took at least one marked tensor
        # Devices read off tensors, by id (kept alive so that ids stay unique): marked or not.
        self._devices: dict[int, tuple[torch.device, bool]] = {}
        for module in modules:
            self.guard(module)

    def guard(self, module: torch.nn.Module) -> None:
        """Mark ``module``'s parameters and buffers (e.g. a network made later)."""
        self.mark(module.parameters())
        self.mark(module.buffers())

    def mark(self, tensors: Iterable[torch.Tensor]) -> None:
        for t in tensors:
            key = id(t)
            self._marked[key] = weakref.ref(t, lambda _, key=key: self._marked.pop(key, None))

    def is_marked(self, t: torch.Tensor) -> bool:
        if isinstance(t, torch.nn.Parameter):
            return True
        ref = self._marked.get(id(t))
        return ref is not None and ref() is t

    def _names_device(self, value: Any) -> bool:
        if id(value) in self._devices:
            return self._devices[id(value)][1]
        if isinstance(value, (str, torch.device)):
            try:
                return torch.device(value) == self.device
            except RuntimeError:
                return False
        if isinstance(value, torch.Tensor):  # .to(other_tensor)
            return self.is_marked(value)
        return False

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None):
        kwargs = kwargs or {}
        flat, _ = tree_flatten((args, kwargs))
        tensors = [t for t in flat if isinstance(t, torch.Tensor)]
        marked = [t for t in tensors if self.is_marked(t)]
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
        if func in _NUMPY and marked:
            raise DeviceMismatch(f"{name}() on a tensor on the model's device (on CUDA: can't "
                                 "convert a cuda tensor to numpy; call .cpu() first)")
        if marked and func not in _CROSS_DEVICE_OK and func not in _FACTORIES:
            host = [t for t in tensors if not self.is_marked(t) and t.dim() > 0]
            if host:
                shapes = ", ".join(str(tuple(t.shape)) for t in host[:3])
                raise DeviceMismatch(f"{name}: tensors on the model's device meet host "
                                     f"tensor(s) of shape {shapes} made on the CPU (a CUDA run "
                                     "fails here: expected all tensors to be on the same device)")
        out = func(*args, **kwargs)
        if func == _DEVICE_OF:
            self._devices[id(out)] = (out, bool(marked))
            return out
        if marked:
            self.checked += 1
        if func in _TO_HOST:
            # On the CPU, .cpu() returns the tensor itself: a view stands for the host copy.
            return out.view_as(out) if marked else out
        device_arg = kwargs.get("device")
        if func is torch.Tensor.to:
            to_dev = any(self._names_device(a) for a in (*args[1:], device_arg))
            mark_out = to_dev or (bool(marked) and not any(
                isinstance(a, (str, torch.device)) for a in (*args[1:], device_arg)))
        elif func in _FACTORIES:
            mark_out = self._names_device(device_arg) if device_arg is not None else False
        else:
            # *_like factories take a device too; otherwise results follow their inputs.
            mark_out = (self._names_device(device_arg) if device_arg is not None
                        else bool(marked))
        if func is torch.Tensor.to and out is args[0] and mark_out != bool(marked):
            # A no-op move returns the tensor itself (CPU to CPU): a view stands for the copy a
            # real move makes, so that the mark of the original (a constant table) stays.
            out = out.view_as(out)
        if mark_out:
            out_flat, _ = tree_flatten(out)
            self.mark(t for t in out_flat if isinstance(t, torch.Tensor))
        return out
