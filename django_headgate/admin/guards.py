"""Permission checks that run before an object is looked up (no existence oracle).

Django's admin looks some objects up before it checks the view permission (``history_view``
redirects for a missing id, then answers 403 for an existing one), so a staff user without the
permission could learn which job or archive ids exist. Headgate's admins check first.
"""

from django.core.exceptions import PermissionDenied


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
