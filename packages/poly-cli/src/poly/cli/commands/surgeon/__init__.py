"""`poly surgeon`: the group and its subcommands (extract, sanitize, insert, prune, weight-strip,
weight-reconstruct)."""
