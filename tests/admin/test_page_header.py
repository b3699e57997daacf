"""The pages the job admin adds (the periodic schedules, an action's confirmation) share one
header: Home › app › Jobs › the page's title (includes/model_breadcrumbs.html)."""

import re

from django.urls import reverse

from django_headgate.models import JobState

from .rows import make_jobs
from .test_bulk_actions import act_on_all_matching


def breadcrumbs(page):
    """The texts of the breadcrumb items of ``page``, and the href of the model's list link."""
    (trail,) = re.findall(r'<ol class="breadcrumbs">(.*?)</ol>', page, re.S)
    items = [re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li[^>]*>(.*?)</li>", trail, re.S)]
    return items, re.findall(r'href="([^"]+)"', trail)


def test_the_periodic_page_has_the_shared_header(operator):
    page = operator.get(reverse("admin:headgate_periodic")).content.decode()
    items, links = breadcrumbs(page)
    assert items[:3] == ["Home", "Headgate", "Jobs"] and len(items) == 4 and items[3]
    assert reverse("admin:headgate_job_changelist") in links


def test_the_confirmation_page_has_the_shared_header(operator):
    make_jobs(3, state=JobState.DEAD)
    response = act_on_all_matching(operator, "retry_jobs", "", confirm=False)
    items, links = breadcrumbs(response.content.decode())
    assert items[:3] == ["Home", "Headgate", "Jobs"] and items[3] == response.context["title"]
    assert reverse("admin:headgate_job_changelist") in links
