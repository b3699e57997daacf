"""Reading the marker files the job-control tasks write (tests/testapp/job_control_tasks.py):
one line per event, ``<event> <attempt> <time.time()>``."""


def _lines(marker):
    return [line.split() for line in marker.read_text().splitlines()] if marker.exists() else []


def marked_events(marker):
    """The events in the order they were written (empty while the file does not exist)."""
    return [fields[0] for fields in _lines(marker)]


def marked_times(marker, event):
    """The times at which ``event`` was written."""
    return [float(fields[2]) for fields in _lines(marker) if fields[0] == event]
