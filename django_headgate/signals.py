"""Django signals sent by django-headgate.

``duty_finished(sender=<Duty class>, outcome=DutyOutcome)``: after every maintenance pass.
"""

from django.dispatch import Signal

duty_finished = Signal()
