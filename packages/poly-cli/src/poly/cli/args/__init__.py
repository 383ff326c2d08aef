"""The option groups of the `poly` commands: one module per group, each with its click options,
its parsed value (a frozen dataclass) and the poly loaders built from that value."""
