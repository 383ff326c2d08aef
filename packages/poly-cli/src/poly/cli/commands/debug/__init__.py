"""`poly debug`: the group and its subcommands (build, precision, reduce, repeat)."""
