"""Helpers for options given once or per tensor name, and for matching tensor names against
names or fnmatch patterns."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from poly.core.logging.logger import G_LOGGER

__all__ = ["value_or_from_dict", "warn_unknown_keys", "contains_wildcard", "match_keys"]


def value_or_from_dict(obj: Any, key: str, default: Any = None) -> Any:
    """
    Resolves an option that is either one value for every tensor or a dict by tensor name.

    In a dict, ``key`` wins, then the ``""`` key (the default for names not listed), then
    ``default``::

        value_or_from_dict(1e-3, "out")                      # 1e-3
        value_or_from_dict({"out": 1.0, "": 2.0}, "other")   # 2.0
    """
    if not isinstance(obj, Mapping):
        return obj
    if key in obj:
        return obj[key]
    if "" in obj:
        return obj[""]
    return default


def warn_unknown_keys(option: Any, option_name: str, valid_keys: Iterable[str]) -> None:
    """Warns (as Polygraphy does) when a per-name option dict names tensors that do not exist."""
    if not isinstance(option, Mapping):
        return
    valid = set(valid_keys)
    given = set(option.keys())
    extra = given - valid
    if extra:
        G_LOGGER.warning(
            f"Extra items in {option_name}: {extra}.\n"
            f"Note: items requested were: {valid}, but all items are: {given}"
        )


def contains_wildcard(target: str) -> bool:
    """Whether ``target`` holds any fnmatch wildcard character."""
    return any(ch in target for ch in "*?[]!")


def match_keys(keys: Iterable[str], targets: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """
    Matches ``keys`` (names or fnmatch patterns) against ``targets``.

    Returns:
        (target -> the key that matched it, the keys that matched nothing)
    """
    keys, targets = list(keys), list(targets)
    target_to_key: dict[str, str] = {}
    matched: set[str] = set()
    for key in keys:
        for target in targets:
            if fnmatch.fnmatchcase(target, key) or target == key:
                matched.add(key)
                target_to_key[target] = key
    return target_to_key, [key for key in keys if key not in matched]
