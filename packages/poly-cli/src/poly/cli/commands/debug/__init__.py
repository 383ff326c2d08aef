"""`poly debug`: the group and its subcommands (build, localize, precision, reduce, repeat)."""
