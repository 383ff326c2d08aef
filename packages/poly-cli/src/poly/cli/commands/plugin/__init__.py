"""`poly plugin`: the group and its subcommands (list, match, replace)."""
