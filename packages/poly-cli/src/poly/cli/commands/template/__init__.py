"""`poly template`: the group and its subcommand (shard-hints)."""
