"""The cells of the cookbook notebooks, one module per notebook (``nbNN_<name>.CELLS``).

``cookbook/_build.py`` writes them out as ``NN_<name>.ipynb``; ``cells.py`` holds what they share.
"""
