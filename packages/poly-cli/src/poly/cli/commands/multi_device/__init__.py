"""`poly multi-device`: the group and its subcommand (shard)."""
