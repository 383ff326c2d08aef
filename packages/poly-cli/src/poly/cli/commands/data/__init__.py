"""`poly data`: the group and its subcommands (concat, merge, to-input)."""
