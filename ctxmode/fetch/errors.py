"""Typed fetch failures. Each has a stable ``code`` slug a front door or test can rely on."""

from ctxmode.errors import CtxError, ExitCode


class FetchError(CtxError):
    """A URL could not be fetched or indexed."""

    code = "fetch"


class BadUrlError(FetchError):
    """The URL cannot be parsed, has no host, or carries credentials."""

    exit_code = ExitCode.USAGE
    code = "bad_url"


class SchemeNotAllowedError(BadUrlError):
    """Only http: and https: are fetched (file:, ftp:, data: … never reach the network)."""

    code = "bad_scheme"


class BlockedAddressError(FetchError):
    """The host resolves to an address the SSRF guard refuses."""

    exit_code = ExitCode.DENIED
    code = "blocked_address"


class DnsError(FetchError):
    """The host name does not resolve."""

    code = "dns_failed"


class ConnectError(FetchError):
    """No connection to the server or proxy, or the server broke the protocol."""

    code = "connect_failed"


class TlsError(FetchError):
    """The TLS handshake or the certificate check failed."""

    code = "tls"


class FetchTimeoutError(FetchError):
    """Connecting, a read, or the whole fetch took longer than its limit."""

    exit_code = ExitCode.TIMEOUT
    code = "timeout"


class FetchCancelledError(FetchError):
    """The caller stopped the fetch (its client went away, or the server is stopping)."""

    def __init__(self) -> None:
        super().__init__(
            "stopped before it finished: the client closed the server's input (or the"
            " server is stopping)"
        )

    exit_code = ExitCode.INTERRUPTED
    code = "cancelled"


class TooManyRedirectsError(FetchError):
    """More redirects than allowed (default 5)."""

    code = "too_many_redirects"


class HttpStatusError(FetchError):
    """The final response was not 2xx."""

    code = "http_status"

    def __init__(self, status: int, reason: str = "") -> None:
        self.status = status
        self.reason = reason
        super().__init__(f"HTTP {status} {reason}".rstrip())


class TooLargeError(FetchError):
    """The body (as sent or once decompressed) exceeds the size cap."""

    code = "too_large"


class UnsupportedContentError(FetchError):
    """The body is binary or in an encoding ctxmode cannot decode."""

    code = "unsupported_content"


class EmptyContentError(FetchError):
    """The page converted to nothing but whitespace."""

    code = "empty_content"
