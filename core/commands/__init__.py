"""The human-evaluation workflow's subcommands of ``evalboard``: ``collect``, ``campaign``, ``evalset``.

:mod:`core.commands.parsers` defines their options with the standard library only (``evalboard --help``
stays instant) and hands the CLI a handler per command that imports the command's module when it runs;
:mod:`core.commands.collect`, :mod:`core.commands.campaign` and :mod:`core.commands.evalset` hold the
handlers, importing what they need at their top.
"""
