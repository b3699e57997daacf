"""The job changelist's filters: exact filters whose choices come from cheap reads (no scan of
the hot table), through the one status reader (``summaries``)."""

from django.contrib import admin

from .summaries import job_state_counts, recent_tasks, retention_class_keys


class ChoicesFilter(admin.SimpleListFilter):
    """An exact filter on one column whose choices come from a cheap read (no table scan); a
    value given in the URL but not among the choices still filters."""

    def values(self, request):
        raise NotImplementedError

    def lookups(self, request, model_admin):
        values = list(self.values(request))
        if self.value() is not None and self.value() not in values:
            values.append(self.value())
        return [(value, value) for value in values]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        return queryset.filter(**{self.parameter_name: self.value()})


class QueueFilter(ChoicesFilter):
    title = "queue"
    parameter_name = "queue"

    def values(self, request):
        return [row.queue for row in job_state_counts(request)]


class TaskFilter(ChoicesFilter):
    title = "task (recent jobs)"
    parameter_name = "task"

    def values(self, request):
        return recent_tasks()


class RetentionClassFilter(ChoicesFilter):
    title = "retention class"
    parameter_name = "retention_class"

    def values(self, request):
        return retention_class_keys()
