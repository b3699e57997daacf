"""The ``errors`` entry of a failed attempt: its text cut to the stored length, then scrubbed of
the row values database errors quote (``store.entries.scrub_database_text``, DESIGN §10).

A task's exception can carry any amount of text (a 4 MiB message, a traceback of many frames),
and the worker's threads share one interpreter lock: the time spent here must not depend on it.
So the text is cut to what is stored *before* it is scrubbed (the message's head, the
traceback's tail, each piece of the traceback at most the message's limit), and the scrubber is linear in
what it is given (one pass over the lines; per line one anchored match, one search of a
bounded pattern and two ``rfind``). A value whose end was cut off is removed up to the cut.
"""

import traceback

from ..store.entries import MESSAGE_MAX_CHARS, TRACEBACK_MAX_CHARS, class_entry, scrub_database_text

#: What ends a piece of traceback cut at its limit (the piece's own end, a newline, is cut off).
CUT_MARK = "…\n"


def scrubbed_head(text, limit):
    """The first ``limit`` characters of ``text``, scrubbed (a value cut at the end removed)."""
    return scrub_database_text(text[:limit], is_cut=len(text) > limit)


def scrubbed_traceback(exc, limit=TRACEBACK_MAX_CHARS, piece_limit=MESSAGE_MAX_CHARS):
    """The tail of ``exc``'s formatted traceback, at most ``limit`` characters, scrubbed.

    ``traceback`` formats a traceback as pieces of whole lines (a frame, the exception's message,
    the text between chained exceptions). The pieces are taken from the last, each cut to its
    first ``piece_limit`` characters (a long message leaves room for the frames above it) and
    scrubbed, until ``limit`` characters are gathered: the scrubber sees at most
    ``limit + piece_limit`` characters however long the message or deep the stack, and every
    piece it sees starts at a line start."""
    pieces, size = [], 0
    for piece in reversed(traceback.format_exception(exc)):
        if len(piece) > piece_limit:
            piece = scrubbed_head(piece, piece_limit) + CUT_MARK
        else:
            piece = scrub_database_text(piece)
        pieces.append(piece)
        size += len(piece)
        if size >= limit:
            break
    return "".join(reversed(pieces))[-limit:]


def _message(exc):
    try:
        return str(exc)
    except Exception:  # a broken __str__ must not cost the job its outcome (traceback's own wording)
        return "<exception str() failed>"


def describe_error(exc, attempt, worker_id=None):
    """The ``errors`` entry of a failed attempt (the store adds the store-clock ``at``): the one
    entry format of ``store.entries``, which the rescue's ``LeaseExpired`` entries share, with
    message and traceback cut to their limits and then scrubbed of database detail."""
    return class_entry(type(exc), attempt, scrubbed_head(_message(exc), MESSAGE_MAX_CHARS),
                       scrubbed_traceback(exc), worker_id)
