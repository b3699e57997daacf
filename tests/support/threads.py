"""Run one call on several threads released together (each with its own connections)."""

import threading

from django.db import connections


def run_at_once(count, target):
    """Run ``target()`` on ``count`` threads released together by a barrier; return their
    results. A thread that raises fails the caller's test (every error is asserted)."""
    barrier, results, errors = threading.Barrier(count), [], []

    def run():
        try:
            barrier.wait(10)
            results.append(target())
        except Exception as exc:  # asserted below, in the caller's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    assert errors == []
    return results
