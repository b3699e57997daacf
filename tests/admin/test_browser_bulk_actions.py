"""The "all N matching" action in Chromium at 1280x800 with the navigation sidebar open: the
operator selects all matching dead jobs, sees the confirmation page with the count and its
button without scrolling, confirms, and the jobs are retried with one admin log entry."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.urls import reverse

from django_headgate.models import Job, JobState

from .conftest import VIEW_PERMISSIONS, make_user
from .rows import make_jobs
from .test_browser import Page, browser  # noqa: F401  (the Chromium fixture)

pytestmark = pytest.mark.browser


def test_retry_all_matching_through_the_confirmation_page(browser, live_server):  # noqa: F811
    make_user("operator", VIEW_PERMISSIONS + ("change_job",))
    make_jobs(120, queue="billing", state=JobState.DEAD)
    make_jobs(3, queue="emails", state=JobState.DEAD)
    browser.set_window_size(1280, 800)
    page = Page(browser, live_server.url)
    page.log_in("operator")
    page.driver.execute_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'true')")
    page.open(reverse("admin:headgate_job_changelist") + "?queue=billing")
    page.find("#action-toggle").click()
    page.find(".actions .question a").click()  # "Select all 120 jobs"
    assert "120" in page.find(".actions .all").text
    page.find("select[name=action] option[value=retry_jobs]").click()
    page.submit("#changelist-form .actions button[type=submit]")

    assert page.exists("#nav-sidebar") and page.find("#nav-sidebar").is_displayed()
    count = page.find(".headgate-confirm-count")
    assert "Retry 120 jobs" in count.text and "all jobs matching the filter" in count.text
    assert page.fits_viewport(".headgate-confirm-count")
    assert page.fits_viewport("input[type=submit][value^='Yes']")
    assert Job.objects.filter(state="dead").count() == 123
    page.screenshot("job-action-confirmation")

    page.submit("input[type=submit][value^='Yes']")
    assert "120 job(s) retried (1 batch(es))." in page.text()
    assert Job.objects.filter(state="dead", queue="emails").count() == 3
    assert Job.objects.filter(state="available").count() == 120
    assert LogEntry.objects.filter(action_flag=CHANGE).count() == 1
