"""`poly inspect`: the group and its subcommands (model, data, tactics, diff-tactics, capability, sparsity)."""
