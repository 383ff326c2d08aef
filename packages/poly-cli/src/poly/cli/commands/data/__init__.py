"""`poly data`: the group and its subcommands (to-input)."""
