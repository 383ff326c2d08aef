"""`poly check`: the group and its subcommands (lint)."""
