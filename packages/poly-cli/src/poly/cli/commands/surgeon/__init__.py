"""`poly surgeon`: the group and its subcommands (extract, sanitize)."""
