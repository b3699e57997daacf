"""Policy forms whose validation *is* the Python API.

A form only turns text into Python values (a duration, an integer); everything else (queue
grammar, key rules, reserved keys, duration range, immutability) is decided by
``django_headgate.policies``, called in the form's model-validation step. Its ``HeadgateError``
is shown with the API's own message, next to the field the exception names (``exc.field``) or
above the form. On success the API has written the row (inside the admin's transaction) and the
form hands back the API's instance: the admin never saves a policy model itself.
"""

import re
from datetime import timedelta

from django import forms
from django.db import router, transaction
from django.utils.dateparse import parse_duration

from .. import policies
from ..exceptions import HeadgateError
from ..models import ArchivePolicy, QueueStoragePolicy, RetentionClass
from ..values.policy_options import duration_suffix

#: "7d", "12h", "90m", "45s", combinable: "1d 12h".
COMPACT_DURATION_RE = re.compile(r"\s*(?:(-?\d+)\s*([dhms])\s*)+")
COMPACT_PART_RE = re.compile(r"(-?\d+)\s*([dhms])")
UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


class DurationInput(forms.Field):
    """A duration typed as ``7d``, ``12h``, ``90m``, ``45s`` (combinable: ``1d 12h``) or in
    Django's format (``7 00:00:00``, ``01:00:00``, ``P7D``); empty is None.

    Only the text is checked here; the range is the API's to decide."""

    default_error_messages = {
        "invalid": "Enter a duration such as 7d, 12h, 90m, 45s, 1d 12h or 7 00:00:00.",
    }

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if isinstance(value, timedelta):
            return value
        text = str(value).strip()
        try:
            if COMPACT_DURATION_RE.fullmatch(text):
                return timedelta(seconds=sum(int(number) * UNIT_SECONDS[unit]
                                             for number, unit in COMPACT_PART_RE.findall(text)))
            parsed = parse_duration(text)
        except OverflowError:
            parsed = None
        if parsed is None:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return parsed

    def prepare_value(self, value):
        if isinstance(value, timedelta):
            return format_duration(value)
        return value


def format_duration(value):
    """A whole-second positive duration as the compact form (``7d``); anything else as Django prints it."""
    if value > timedelta(0) and not value.microseconds:
        return duration_suffix(value)
    return str(value)


class PolicyForm(forms.ModelForm):
    """Model validation replaced by one call of the policy API (see the module docstring)."""

    def save_through_api(self):
        """Call the API with the form's values (:meth:`value_of`); return the instance it saved."""
        raise NotImplementedError(f"{type(self).__name__} must define save_through_api()")

    def value_of(self, name):
        """The submitted value of ``name``, or the instance's when the field is read-only here."""
        if name in self.fields:
            return self.cleaned_data.get(name)
        return getattr(self.instance, name)

    def _post_clean(self):
        if self._errors:
            return  # the text did not parse: no API call with half the values
        using = router.db_for_write(self._meta.model)
        try:
            with transaction.atomic(using=using):
                self.instance = self.save_through_api()
        except HeadgateError as exc:
            field = getattr(exc, "field", None)
            self.add_error(field if field in self.fields else None, str(exc))


class RetentionClassForm(PolicyForm):
    key = forms.CharField(required=False, strip=False,
                          help_text="Lower-case letters, digits and _, starting with a letter; at most 18 characters.")
    duration = DurationInput(required=False,
                             help_text="How long terminal jobs of this class stay, e.g. 365d. Immutable once saved.")

    class Meta:
        model = RetentionClass
        fields = ("key", "duration")

    def save_through_api(self):
        return policies.register_retention_class(self.value_of("key"), self.value_of("duration"))


class QueueStoragePolicyForm(PolicyForm):
    queue = forms.CharField(required=False, strip=False)
    retention = DurationInput(required=False,
                              help_text="e.g. 7d. Empty keeps the queue's terminal jobs forever.")
    cleanup_batch_limit = forms.IntegerField(required=False,
                                             help_text="Rows of this queue one sweep transaction evicts; empty: the sweep's batch size.")
    paused = forms.BooleanField(required=False, help_text="Hold the cleanup: the sweep leaves this queue's expired jobs in place.")

    class Meta:
        model = QueueStoragePolicy
        fields = ("queue", "retention", "cleanup_batch_limit", "paused")

    def save_through_api(self):
        return policies.set_queue_retention(
            self.value_of("queue"), self.value_of("retention"),
            cleanup_batch_limit=self.value_of("cleanup_batch_limit"), paused=self.value_of("paused"),
        )


class ArchivePolicyForm(PolicyForm):
    queue = forms.CharField(required=False, strip=False)
    archive_retention = DurationInput(required=False,
                                      help_text="How long archived jobs of this queue are kept at least, e.g. 90d.")

    class Meta:
        model = ArchivePolicy
        fields = ("queue", "archive_retention")

    def save_through_api(self):
        return policies.set_archive_policy(self.value_of("queue"), self.value_of("archive_retention"))
