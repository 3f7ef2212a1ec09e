"""Errors that the CLI turns into a one-line message and exit status 2."""


class QKInputError(ValueError):
    """Bad user input (file, matrix, claim name).  The CLI prints ``str(err)``
    on one line and exits with status 2; no traceback is shown."""

    exit_code = 2


class HypothesisFailed(QKInputError):
    """A claim's hypothesis does not hold on the given input (e.g. ``L = 0``
    has no profile).  Raised by ``Claim.check`` when ``strict`` is set."""


class CertificateExists(QKInputError):
    """A different certificate already exists at the target path and
    ``--force`` was not given."""
