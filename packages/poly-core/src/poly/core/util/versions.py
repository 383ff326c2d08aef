"""``version``: comparable version tuples without third-party packages."""

import re
from typing import Any

__all__ = ["version"]

_PART = re.compile(r"(\d+)|([A-Za-z]+)")
_PRE = {"dev": -4, "a": -3, "alpha": -3, "b": -2, "beta": -2, "rc": -1, "c": -1}


def version(version_str: Any) -> tuple[Any, ...]:
    """
    Returns a tuple that orders versions as expected: ``version("10.0") > version("8.6.1")``,
    ``version("1.0rc1") < version("1.0") < version("1.0.post1")``. Local parts (``+cu121``) are
    ignored. Each numeric component compares as an integer; pre-release tags sort below the
    release.

    Args:
        version_str (str): The version, e.g. ``trt.__version__``.
    """
    text = str(version_str).split("+")[0].strip().lower()
    key = []
    for number, word in _PART.findall(text):
        if number:
            key.append((0, int(number)))
        else:
            key.append((_PRE.get(word, 1 if word == "post" else 0), 0))
    # A release sorts above its pre-releases: pad with the release marker.
    while len(key) < 4:
        key.append((0, 0))
    return tuple(key)
