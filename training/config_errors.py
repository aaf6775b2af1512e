"""pydantic's validation errors in the config's own words: the key's dotted path, the value,
and what is allowed, read from the config's JSON Schema (so the loader says what an editor
says). An unknown key gets the closest allowed key and the section where a real key of that
name belongs (``selfplay.n_steps`` looks like ``n_envs`` and belongs in ``ppo``)."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import ValidationError

from .config import POLICY_CLASS_KEYS, SECTIONS, config_schema


def describe(err: ValidationError, data: dict[str, Any]) -> str:
    """One line per problem (a union's members each report the same one)."""
    messages: list[str] = []
    for error in err.errors(include_url=False):
        message = _message(error, data)
        if message not in messages:
            messages.append(message)
    return "\n".join(messages)


def _message(error: Any, data: dict[str, Any]) -> str:
    loc, kind = tuple(error["loc"]), error["type"]
    if kind in ("extra_forbidden", "invalid_key") or loc[-1:] == ("[key]",):
        # An unknown key: of a section (extra_forbidden; invalid_key: a key that is no text,
        # such as YAML's 1: or null:, which pydantic names by its str()), or of a mapping whose
        # keys are a fixed few (selfplay.opponents: its key failed the "[key]" check).
        if loc[-1:] == ("[key]",):
            parent, key = loc[:-2], loc[-2]
        else:
            parent, key = loc[:-1], error["input"] if kind == "invalid_key" else loc[-1]
        path, node, _, whole = _walk(parent, data)
        if whole:
            section = f"{path}." if path else ""
            if path == "ppo.policy_kwargs" and str(key).startswith("features_extractor"):
                return (f"{section}{key}: set the policy input with the top-level "
                        "'features: raw | derived' instead")
            if path == "ppo.policy_kwargs" and key in POLICY_CLASS_KEYS:
                return f"{section}{key}: cannot be set in a config (it takes a class, which " \
                       "YAML cannot hold)"
            allowed = list(node.get("properties") or node["propertyNames"]["enum"])
            return unknown_key(section, str(key), allowed, data.get("game"))
        loc = parent
    path, node, value, _ = _walk(loc, data)
    if kind == "missing":
        example = f" (e.g. '{path}: {node['examples'][0]}')" if "examples" in node else ""
        return f"{path}: missing{example}"
    what = "a finite number" if kind == "finite_number" else expected(node)
    return f"{path}: expected {what}, got {value!r}"


def _walk(loc: tuple[Any, ...], data: Any) -> tuple[str, dict[str, Any], Any, bool]:
    """Follow ``loc`` through the schema and the data: the dotted path, the schema there, the
    value there, and whether the whole of ``loc`` was followed (a union's members, which
    pydantic names in ``loc``, are not: the error is the union's)."""
    node: dict[str, Any] = config_schema()
    path, value = "", data
    for depth, part in enumerate(loc):
        node = _resolve(node)
        if "anyOf" in node:
            return path, node, value, False
        if isinstance(part, str) and part in node.get("properties", {}):
            node = node["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        elif "items" in node and isinstance(part, int):
            node = node["items"]
        else:
            return path, node, value, depth == len(loc)
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            value = None
    return path, _resolve(node), value, True


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """A ``$ref`` replaced by what it names (the keys beside it kept)."""
    if "$ref" not in node:
        return node
    target = config_schema()["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def expected(node: dict[str, Any]) -> str:
    """What a schema allows, in words: 'an integer >= 1', "null or a number > 0"."""
    node = _resolve(node)
    if "errorMessage" in node:
        return str(node["errorMessage"])
    if "anyOf" in node:  # null first: "null or a number > 0"
        members = sorted(node["anyOf"], key=lambda m: m.get("type") != "null")
        return " or ".join(expected(m) for m in members)
    if "const" in node:
        return repr(node["const"])
    if "enum" in node:
        values = [repr(v) for v in node["enum"]]
        return " or ".join(values) if len(values) == 2 else f"one of {', '.join(values)}"
    kind = node.get("type")
    if kind in ("integer", "number"):
        return ("an integer" if kind == "integer" else "a number") + _range(node, kind)
    if kind == "array":
        item = expected(node["items"])
        return "a list of " + item.replace("an integer", "integers").replace("a number",
                                                                              "numbers")
    return {"null": "null", "boolean": "true or false", "object": "a mapping",
            "string": "a non-empty string" if node.get("minLength") else "a string"
            }.get(str(kind), "a value")


def _range(node: dict[str, Any], kind: str) -> str:
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f" in {low}..{high}" if kind == "integer" else f" in [{low:g}, {high:g}]"
    if "exclusiveMinimum" in node:
        return f" > {node['exclusiveMinimum']:g}"
    return f" >= {low:g}" if low is not None else ""


def unknown_key(section: str, key: str, allowed: list[str], game: Any = None) -> str:
    """The message for an unknown ``key`` in ``section`` ('ppo.', or '' at the top level): a
    look-alike allowed there, and where a real key of that name belongs."""
    homes = [f"in {name}.{key}" for name, names in _section_keys(game).items()
             if f"{name}." != section and key in names]
    top = config_schema()["properties"]
    if section and key in top and key not in SECTIONS:
        homes.append("at the top level")
    close = difflib.get_close_matches(key, allowed, n=1)
    hints = [f"did you mean {close[0]!r}?"] if close else []
    if homes:
        hints.append(f"{key} belongs {' or '.join(homes)}" if hints
                     else f"it belongs {' or '.join(homes)}")
    hint = f" ({' '.join(hints)})" if hints else ""
    return f"{section}{key}: unknown key{hint}; allowed: {', '.join(sorted(allowed))}"


def _section_keys(game: Any) -> dict[str, list[str]]:
    """The keys each section takes, and ``game``'s options in ``env`` (an installed game)."""
    schema = config_schema()
    keys = {name: list(_resolve(schema["properties"][name])["properties"])
            for name in ("ppo", *SECTIONS)}
    for case in schema["allOf"]:
        if case["if"]["properties"]["game"]["const"] == game:
            keys["env"] = list(case["then"]["properties"]["env"]["properties"])
    return {"ppo": keys.pop("ppo"), **({"env": keys.pop("env")} if "env" in keys else {}),
            **keys}
