"""The sandbox API's errors, Alibaba Cloud style: raised by the operations, the audit
log and the request checks, answered as an error body by the RPC layer."""

from __future__ import annotations


class ApiError(Exception):
    """An Alibaba Cloud style error: code, message and HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400, *, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.field = field


class ValidationErrors(ApiError):
    """Several invalid fields at once (pages show each next to its input)."""

    def __init__(self, errors: dict[str, ApiError]) -> None:
        first = next(iter(errors.values()))
        super().__init__(first.code, first.message, first.status, field=first.field)
        self.errors = errors


def missing(name: str) -> ApiError:
    return ApiError("MissingParameter", f'The input parameter "{name}" that is mandatory for processing '
                    "this request is not supplied.", 400, field=name)


def invalid(name: str, code: str | None = None, why: str = "") -> ApiError:
    extra = f" {why}" if why else ""
    return ApiError(code or "InvalidParameter", f'The specified parameter "{name}" is not valid.{extra}', 400,
                    field=name)
