"""Converters from public graph formats to the graphtier dataset format.

planetoid.py extracts the Planetoid pickles into .npy arrays; `graphtier convert planetoid` runs it
(found beside the `graphtier` executable, through $GRAPHTIER_PYTHON_DIR, or as
`python -m graphtier.convert.planetoid`) and converts the arrays. It runs the same way by hand:
`python -m graphtier.convert.planetoid --root DIR --name cora --out ARRAYS`.
"""
