"""The one exception type of the drover client."""

from __future__ import annotations

from typing import Optional, Sequence


class DroverError(Exception):
    """drover refused a request or failed: carries its message, exit code and the command that was run.

    Attributes:
        message: drover's error line without its ``drover: `` prefix (what is wrong and what to do).
        exit_code: drover's exit code (2 bad usage or input, 1 the work or the environment failed), or None
            when drover could not be run at all (not found, or the server did not answer).
        argv: the command line that was run (or the request made), for the record.
        stderr: everything drover wrote on stderr.
    """

    def __init__(
        self,
        message: str,
        exit_code: Optional[int] = None,
        argv: Sequence[str] = (),
        stderr: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.argv = list(argv)
        self.stderr = stderr

    def __str__(self) -> str:
        if self.exit_code is None:
            return self.message
        return f"{self.message} (exit code {self.exit_code})"
