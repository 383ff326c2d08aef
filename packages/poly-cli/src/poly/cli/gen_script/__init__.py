"""`--gen-script`: Python scripts, written with poly's public API, that do what a command does
(``run_script`` for `poly run`; ``script_source`` is the text builder they share)."""
