"""One module per ranking scheme. Each imports only the bottom of :mod:`core.ranking` (types, rows) and
numerics, never another scheme; :mod:`core.ranking` chooses among them."""
