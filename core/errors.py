"""The one base of every error a user can cause, and the error of a bad setting.

:class:`EvalBoardError` marks an error whose message is for the user: a file that cannot be read, a
setting out of range, a dataset, run, eval set or campaign that does not exist, a token that is not
valid, a ranking the data cannot support. The command line prints its message and exits with status 2;
the pages show it in an error box. Any other exception is a fault of the software: the command line
names its type and exits with status 1.

Each module keeps its own error classes (they are part of its interface); each derives from
:class:`EvalBoardError` and from the built-in class it always had (``ValueError``, ``KeyError``,
``PermissionError``, ``RuntimeError``), so ``except ValueError`` around a call keeps working.

This module imports nothing, so any module (the command line's parser included) can import it cheaply.
"""

from __future__ import annotations

CLI_PREFIX = "evalboard: "


class EvalBoardError(Exception):
    """An error the user caused and can fix; the message says what and where. Nothing was stored."""

    def cli_message(self) -> str:
        """The line(s) the command line prints for this error."""
        return f"{CLI_PREFIX}{self}"


class SettingError(EvalBoardError, ValueError):
    """An argument or option outside its allowed values (alpha, replicates, seed, a policy name …)."""
