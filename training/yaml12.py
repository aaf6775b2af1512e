"""YAML 1.2 for config files (ruamel.yaml), with the checks its loader leaves out.

YAML 1.2 reads numbers as a person writes them: ``1e-4`` is a float (PyYAML's YAML 1.1 read it
as text), ``010`` is 10 (not octal 8) and ``1:30`` is text (not the base-60 number 90). On top of
ruamel.yaml's safe loader this module adds what a config file needs: a duplicate key is an error
naming its dotted path and both lines (ruamel names neither the path nor the first line), and
every error is one line naming the file and the position.
"""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import ConstructorError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError


class YamlError(ValueError):
    """Text that is not valid YAML, or a mapping with a key twice; one line."""


class _Constructor(SafeConstructor):
    """ruamel's safe constructor, but a bad explicit ``!!int`` / ``!!float`` is a YAML error at
    its position (ruamel lets Python's bare ValueError out, which names no line)."""

    def construct_yaml_int(self, node: Any) -> Any:
        return self._number(node, super().construct_yaml_int, "an integer")

    def construct_yaml_float(self, node: Any) -> Any:
        return self._number(node, super().construct_yaml_float, "a number")

    def _number(self, node: Any, construct: Any, what: str) -> Any:
        try:
            return construct(node)
        except ValueError:
            raise ConstructorError(None, None, f"expected {what}, found {node.value!r}",
                                   node.start_mark) from None


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)
_Constructor.add_constructor("tag:yaml.org,2002:float", _Constructor.construct_yaml_float)


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = _Constructor
    yaml.default_flow_style = False
    # Keep the config's own key order (ruamel annotates this flag as None).
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    return yaml


def load(text: str, where: str = "<string>") -> Any:
    """The YAML document in ``text`` (None when it holds none); ``where`` names it in errors."""
    yaml = _yaml()
    try:
        node = yaml.compose(text)
        if node is None:
            return None
        _check_duplicate_keys(node, "", where, set())
        return yaml.constructor.construct_document(node)
    except YAMLError as err:
        raise YamlError(f"{where}: not valid YAML: {_one_line(err, text)}") from None


def dump(data: Any) -> str:
    """``data`` as block-style YAML 1.2, keys in their order."""
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()


def _check_duplicate_keys(node: Node, path: str, where: str, seen: set[int]) -> None:
    if id(node) in seen:  # an alias: its anchor was checked already (and may contain itself)
        return
    seen.add(id(node))
    if isinstance(node, MappingNode):
        first: dict[tuple[Any, Any], Node] = {}
        for key, value in node.value:
            name = f"{path}.{key.value}" if path else str(key.value)
            if isinstance(key, ScalarNode):
                if (key.tag, key.value) in first:
                    at, before = key.start_mark, first[key.tag, key.value].start_mark
                    same_line = at.line == before.line  # a flow mapping: {a: 1, a: 2}
                    raise YamlError(f"{where}: {name}: duplicate key at {_at(at, same_line)} "
                                    f"(first at {_at(before, same_line)}); keep one")
                first[key.tag, key.value] = key
            _check_duplicate_keys(value, name, where, seen)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _check_duplicate_keys(item, f"{path}[{i}]", where, seen)


def _at(mark: Any, column: bool) -> str:
    return f"line {mark.line + 1}" + (f", column {mark.column + 1}" if column else "")


def _one_line(err: YAMLError, text: str) -> str:
    """ruamel's message in one line, with the position: its own spans several lines, quotes
    the source and names it "<unicode string>"."""
    if isinstance(err, MarkedYAMLError) and err.problem_mark is not None:
        mark = err.problem_mark
        problem = f"line {mark.line + 1}, column {mark.column + 1}: {err.problem}"
        if err.context and err.context_mark is not None:
            problem += (f" ({err.context} at line {err.context_mark.line + 1}, column "
                        f"{err.context_mark.column + 1})")
        return problem
    if isinstance(err, ReaderError):  # a character YAML does not allow
        line = text.count("\n", 0, err.position) + 1
        column = err.position - (text.rfind("\n", 0, err.position) + 1) + 1
        return f"line {line}, column {column}: {str(err).splitlines()[0]}"
    return " ".join(str(err).split())
