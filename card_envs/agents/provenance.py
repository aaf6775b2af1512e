"""What a saved policy was trained on, written into its file and checked where it is loaded.

A policy is only meaningful on the env it learned: the same game, the same options (a policy
trained on whole games plays a single hand differently, with the same observation size), the
same version of the env and of its observation layout. The observation's shape alone cannot
tell these apart, so a saved policy records them (:func:`env_identity`), in an extra
``card_envs.json`` entry of SB3's ``.zip`` (SB3 reads only its own entries), and a load where
any differs is refused with the differences listed (:class:`PolicyMismatchError`), unless the
caller says to go on (``allow_policy_mismatch=True``, ``--allow-policy-mismatch``).

A policy saved by SB3 itself (``model.save``) records nothing: it is loaded with a
:class:`UnrecordedPolicyWarning` (only its shapes can be checked), and :func:`record_identity`
adds the record to it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
import zipfile
from collections.abc import Mapping
from typing import Any

#: The entry of a saved policy's ``.zip`` that holds its :func:`env_identity`.
ENTRY = "card_envs.json"
FORMAT = 1
#: The identity's keys, in the order differences are listed.
KEYS = ("game", "env_id", "env_config", "observation_layout", "package_version")


class PolicyMismatchError(ValueError):
    """A saved policy was trained on another env than the one it is loaded for."""


class UnrecordedPolicyWarning(UserWarning):
    """A saved policy records no env (saved by SB3 itself): only its shapes are checked."""


def layout_identity(layout: Any) -> dict[str, Any]:
    """The observation layout's size and a digest of its fields (names, sizes, bounds, in
    order): any change to what a position of the vector means changes the digest."""
    low, high = layout.bounds()
    fields = [[name, sl.stop - sl.start] for name, sl in layout.slices.items()]
    text = json.dumps({"fields": fields, "low": low.tolist(), "high": high.tolist()})
    return {"size": int(layout.size), "digest": hashlib.sha256(text.encode()).hexdigest()[:16]}


def env_identity(game: str, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a policy trained on ``game`` with ``config`` (options; None: the defaults) records:
    the game, the env's versioned id (its ``metadata["name"]``), every option as resolved, the
    observation layout's identity and this package's version."""
    from card_envs import __version__
    from card_envs.core.aec_env import CardAECEnv
    from card_envs.games import make_engine

    engine = make_engine(game, **dict(config or {}))
    return {"format": FORMAT, "game": game,
            "env_id": CardAECEnv(engine).metadata["name"],
            "env_config": _json_safe(engine.config),
            "observation_layout": layout_identity(engine.layout),
            "package_version": __version__}


def with_identity(policy_zip: bytes, identity: Mapping[str, Any]) -> bytes:
    """A saved policy's bytes with ``identity`` added as its :data:`ENTRY`."""
    buffer = io.BytesIO(policy_zip)
    with zipfile.ZipFile(buffer, "a") as archive:
        if ENTRY in archive.namelist():
            raise ValueError(f"the policy already holds {ENTRY}")
        archive.writestr(ENTRY, json.dumps(dict(identity), indent=2, sort_keys=True))
    return buffer.getvalue()


def read_identity(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The identity a saved policy records, or None if it records none (saved before this
    package recorded them, or by SB3 directly)."""
    with zipfile.ZipFile(path) as archive:
        if ENTRY not in archive.namelist():
            return None
        data = json.loads(archive.read(ENTRY))
    if not isinstance(data, dict):
        raise ValueError(f"{os.fspath(path)!r}: its {ENTRY} is not an object")
    return data


def record_identity(path: str | os.PathLike[str], game: str,
                    config: Mapping[str, Any] | None = None) -> None:
    """Record in a policy SB3 saved (``model.save``) that it was trained on ``game`` with
    ``config`` under this package's versions; the file is replaced atomically."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = with_identity(f.read(), env_identity(game, config))
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def identity_differences(saved: Mapping[str, Any] | None, expected: Mapping[str, Any],
                         what: str = "policy") -> list[str]:
    """Each way ``saved`` (of a ``what``: a policy, a checkpoint) differs from ``expected``,
    in words (empty: none)."""
    if saved is None:
        return [f"the {what} records no game, options or versions (saved by another program "
                "or an older version)"]
    out = []
    for key in KEYS:
        was, now = saved.get(key), expected.get(key)
        if key == "env_config" and isinstance(was, dict) and isinstance(now, dict):
            for option in sorted(set(was) | set(now)):
                if was.get(option, "<absent>") != now.get(option, "<absent>"):
                    out.append(f"option {option}: {what} {was.get(option, '<absent>')!r}, "
                               f"env {now.get(option, '<absent>')!r}")
        elif was != now:
            out.append(f"{key.replace('_', ' ')}: {what} {was!r}, env {now!r}")
    return out


def check_identity(saved: Mapping[str, Any] | None, game: str,
                   config: Mapping[str, Any] | None, label: str,
                   allow_mismatch: bool = False) -> None:
    """Refuse a policy whose recorded identity differs from ``game`` with ``config``'s,
    listing every difference, unless ``allow_mismatch``; warn about one that records none."""
    if allow_mismatch:
        return
    if saved is None:
        warnings.warn(f"policy {label!r} records no game, options or versions (saved by SB3 "
                      f"itself?): only its observation and action shapes are checked against "
                      f"{game} with {dict(config or {})}. card_envs.agents.provenance."
                      f"record_identity(path, game, config) records them",
                      UnrecordedPolicyWarning, stacklevel=4)
        return
    differences = identity_differences(saved, env_identity(game, config))
    if differences:
        raise PolicyMismatchError(
            f"policy {label!r} was not trained on this env ({game} with "
            f"{dict(config or {})}): " + "; ".join(differences)
            + ". To use it anyway, pass allow_policy_mismatch=True (a PolicyAgent: "
            "allow_mismatch=True; the command line: --allow-policy-mismatch)")


def _json_safe(config: Mapping[str, Any]) -> dict[str, Any]:
    """Options as JSON keeps them (a tuple comes back a list), so a read-back compares equal."""
    return json.loads(json.dumps(dict(config), default=str))
