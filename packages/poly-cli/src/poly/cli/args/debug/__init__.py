"""The debug option groups: the debug flags declared once, rendered for click (`poly debug`) and argparse (`poly.tools`)."""
