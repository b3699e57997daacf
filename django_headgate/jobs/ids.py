"""Time-ordered job IDs (UUID version 7, RFC 9562), so the primary key index grows at its end."""

import os
import time
import uuid


def uuid7():
    """A UUIDv7: 48-bit Unix milliseconds, version and variant bits, 74 random bits."""
    unix_ms = time.time_ns() // 1_000_000
    value = (unix_ms & 0xFFFF_FFFF_FFFF) << 80
    value |= int.from_bytes(os.urandom(10), "big") & ((1 << 80) - 1)
    value &= ~(0xF << 76)
    value |= 0x7 << 76  # version 7
    value &= ~(0x3 << 62)
    value |= 0x2 << 62  # RFC 4122 variant
    return uuid.UUID(int=value)
