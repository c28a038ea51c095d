"""Bytes on disk -> text, with a diagnostic instead of an exception.

Invalid UTF-8 is reported once, at the line of the first bad byte, and the file
is still parsed with U+FFFD replacement characters. A UTF-8 byte order mark is
dropped. Line endings are normalised to ``\\n`` (``\\r\\n`` and lone ``\\r`` count
as one line break each, as markdown-it counts them) and NUL becomes U+FFFD.
"""

from __future__ import annotations

from docverify.parse.model import Diagnostic, Severity


def decode(data: bytes, path: str) -> tuple[str, list[Diagnostic]]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return normalize(data.decode("utf-8")), []
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        message = (
            f"invalid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "bad bytes were replaced with U+FFFD"
        )
        text = data.decode("utf-8", errors="replace")
        return normalize(text), [Diagnostic(path, line, Severity.WARNING, message)]


def normalize(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text
