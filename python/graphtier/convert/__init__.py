"""Converters from public graph formats to the graphtier dataset format (see planetoid.py)."""
