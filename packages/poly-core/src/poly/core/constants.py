"""Simple constants shared across poly; names and values match Polygraphy's ``polygraphy.constants``."""

__all__ = [
    "DEFAULT_SHAPE_VALUE",
    "DEFAULT_SEED",
    "TAB",
    "MARK_ALL",
    "LEGACY_TYPE_MARKER",
    "TYPE_MARKER",
]

DEFAULT_SHAPE_VALUE = 1
"""The value substituted for a dynamic dimension when no shape is given for it."""

DEFAULT_SEED = 1
"""The default seed of synthetic input data."""

TAB = " " * 4
"""The indentation unit of logged messages and saved JSON."""

MARK_ALL = "mark-all"
"""Special value for ``ModifyOutputs``-style loaders: mark every tensor as an output."""

LEGACY_TYPE_MARKER = "polygraphy_serialized_json_type"
"""Value that marked a custom-encoded object in JSON written by old Polygraphy versions."""

TYPE_MARKER = "polygraphy_class"
"""Key that names the type of a custom-encoded object in JSON (kept for file compatibility)."""
