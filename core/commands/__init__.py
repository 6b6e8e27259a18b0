"""The human-evaluation workflow's subcommands of ``evalboard``: ``collect``, ``campaign``, ``evalset``.

Each module's ``add_commands(subparsers)`` adds its subcommands and returns {name: handler(args) ->
exit status}. They import only the standard library (and :mod:`core.schema`) at the top, and each
handler imports its package when it runs, so ``evalboard --help`` stays instant. They live here rather
than in ``core.collect`` and the others because importing any module of a package first runs the
package's ``__init__``, which loads the whole collector, campaign store or eval-set builder.
"""
