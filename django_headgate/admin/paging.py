"""Paging without COUNT: for tables too large to count on every page view (the archive).

Django's changelist asks its paginator for ``count`` on every request, and a ``COUNT(*)`` over
millions of archived rows costs a full index scan. :class:`ProbePaginator` instead reads the
requested page plus one row: the count it reports is a lower bound (``offset`` + rows seen),
exact on the last page, and enough to know whether a next page exists. One query per page,
whatever the table size. :class:`ProbeChangeList` always takes the page from the paginator, so
the number of queries does not depend on the number of rows either.
"""

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import PAGE_VAR, ChangeList
from django.core.paginator import EmptyPage, InvalidPage, Page, PageNotAnInteger, Paginator
from django.utils.functional import cached_property


class ProbePaginator(Paginator):
    """A paginator that knows only the requested page and whether another one follows.

    ``range_field`` names an indexed column the list is ordered by first (``evicted_at_ms``):
    the page is then read in two index-friendly steps. First the values of that column alone at
    the page's positions (an index-only scan, stopping after the page), whose last value bounds
    the page; then the page's rows, filtered by that bound and fully ordered (tie-breaker
    included). MariaDB, for one, cannot serve ``ORDER BY evicted_at_ms DESC, archive_id DESC``
    from the index of a partitioned table and would sort every row; with the bound it sorts at
    most the rows up to the end of the page.
    """

    def __init__(self, object_list, per_page, page_number=1, range_field=None, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.page_number = page_number
        self.range_field = range_field

    @cached_property
    def _probe(self):
        offset = (self.page_number - 1) * self.per_page
        rows = self._bounded(offset) if self.range_field else self.object_list
        return list(rows[offset:offset + self.per_page + 1])

    def _bounded(self, offset):
        """The object list restricted to rows that can be on this page (see the class docstring)."""
        ordering = self.object_list.query.order_by
        leading = ordering[0] if ordering else None
        if leading not in (self.range_field, f"-{self.range_field}"):
            return self.object_list
        values = list(self.object_list.order_by(leading).values_list(self.range_field, flat=True)
                      [offset:offset + self.per_page + 1])
        if not values:
            return self.object_list.none()
        lookup = "gte" if leading.startswith("-") else "lte"
        return self.object_list.filter(**{f"{self.range_field}__{lookup}": values[-1]})

    @property
    def has_more(self):
        return len(self._probe) > self.per_page

    @cached_property
    def count(self):
        """Rows up to the end of this page, plus one when a next page exists (a lower bound)."""
        return (self.page_number - 1) * self.per_page + len(self._probe)

    @cached_property
    def num_pages(self):
        return self.page_number + 1 if self.has_more else self.page_number

    def validate_number(self, number):
        try:
            number = int(number)
        except (TypeError, ValueError):
            raise PageNotAnInteger("That page number is not an integer") from None
        if number != self.page_number:
            raise InvalidPage("Only the requested page is available")
        if number > 1 and not self._probe:
            raise EmptyPage("That page contains no results")
        return number

    def page(self, number):
        number = self.validate_number(number)
        return Page(self._probe[:self.per_page], number, self)


class ProbeChangeList(ChangeList):
    """A changelist that shows exactly one page read by a :class:`ProbePaginator`.

    No ``COUNT(*)`` (``show_full_result_count`` is ignored: no total is ever counted), no "show
    all", no "select all": the number of queries is the same for 5 rows or 5 million. The
    template links to the newer and older pages (``admin/headgate/includes/pager.html``).
    """

    def get_results(self, request):
        paginator = self.model_admin.get_paginator(request, self.queryset, self.list_per_page)
        try:
            result_list = paginator.page(self.page_num).object_list
        except InvalidPage:
            raise IncorrectLookupParameters from None
        # No total is known, so the page is all there is to count: the admin then offers no
        # "Select all N" (an action applies to the rows ticked on this page) and the search box
        # shows no "N results".
        self.result_count = len(result_list)
        self.show_full_result_count = False
        self.full_result_count = self.result_count
        self.show_admin_actions = True
        self.result_list = result_list
        self.can_show_all = False
        self.multi_page = paginator.num_pages > 1
        self.paginator = paginator

    @property
    def newer_page_url(self):
        """The previous page's query string, or None on the first page."""
        return self.get_query_string({PAGE_VAR: self.page_num - 1}) if self.page_num > 1 else None

    @property
    def older_page_url(self):
        """The next page's query string, or None on the last page."""
        return self.get_query_string({PAGE_VAR: self.page_num + 1}) if self.paginator.has_more else None


def requested_page(request):
    """The 1-based page number the changelist will show (bad values read as 1, like Django)."""
    try:
        return max(int(request.GET.get(PAGE_VAR, 1)), 1)
    except ValueError:
        return 1
