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
    """A paginator that knows only the requested page and whether another one follows."""

    def __init__(self, object_list, per_page, page_number=1, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.page_number = page_number

    @cached_property
    def _probe(self):
        offset = (self.page_number - 1) * self.per_page
        return list(self.object_list[offset:offset + self.per_page + 1])

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

    No ``COUNT(*)`` (``show_full_result_count`` is ignored: no total is ever counted) and no
    "show all": the number of queries is the same for 5 rows or 5 million.
    """

    def get_results(self, request):
        paginator = self.model_admin.get_paginator(request, self.queryset, self.list_per_page)
        try:
            result_list = paginator.page(self.page_num).object_list
        except InvalidPage:
            raise IncorrectLookupParameters from None
        self.result_count = paginator.count
        self.show_full_result_count = False
        # Equal counts hide the search box's "N results (Show all)": N is only a lower bound.
        self.full_result_count = paginator.count
        self.show_admin_actions = True
        self.result_list = result_list
        self.can_show_all = False
        self.multi_page = paginator.num_pages > 1
        self.paginator = paginator


def requested_page(request):
    """The 1-based page number the changelist will show (bad values read as 1, like Django)."""
    try:
        return max(int(request.GET.get(PAGE_VAR, 1)), 1)
    except ValueError:
        return 1
