"""`--gen-script`: the call trees option groups build (``call_tree``), evaluated by `poly run` and
printed as Python scripts of poly's public API (``run_script``; ``script_source`` is the text
builder)."""
