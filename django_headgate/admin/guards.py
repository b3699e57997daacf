"""Guards shared by Headgate's model admins: read-only admins, permission checks before any lookup (no existence
oracle) and URL filters on allow-listed columns only.

Django's admin looks some objects up before it checks the view permission (``history_view``
redirects for a missing id, then answers 403 for an existing one), so a staff user without the
permission could learn which job or archive ids exist. Headgate's admins check first.

Django also accepts a URL lookup on any local column (``?output__startswith=a``), which lets a
viewer recover a withheld column by testing guesses, one prefix at a time. Headgate's admins
accept lookups only on the columns they list as filterable (those every viewer sees) and on
their list filters' own parameters; anything else, a column added later included, answers 400.
"""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models.constants import LOOKUP_SEP


class ReadOnly:
    """ModelAdmin mixin: nothing is added, changed or deleted through this admin (the store
    writes these tables; buttons and actions that act go through the API)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ViewPermissionFirst:
    """ModelAdmin mixin: history and change views refuse before the lookup without view permission."""

    def _require_view_permission(self, request):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied

    def history_view(self, request, object_id, extra_context=None):
        self._require_view_permission(request)
        return super().history_view(request, object_id, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        self._require_view_permission(request)
        return super().change_view(request, object_id, form_url, extra_context)


class AllowListedLookups:
    """ModelAdmin mixin: URL lookups only on ``filterable_fields`` and the parameters of the
    list filters (``?month=``); every other lookup is refused, whoever asks."""

    #: Columns a URL may filter on: only columns every viewer of the model sees.
    filterable_fields = ()

    def lookup_allowed(self, lookup, value, request):
        name = lookup.split(LOOKUP_SEP, 1)[0]
        if name not in self.filterable_fields and name not in self._filter_parameters(request):
            return False
        return super().lookup_allowed(lookup, value, request)

    def _filter_parameters(self, request):
        return {item.parameter_name for item in self.get_list_filter(request)
                if isinstance(item, type) and issubclass(item, admin.SimpleListFilter)}
