"""The input data option groups: the data loader and how each runner is run over it."""
