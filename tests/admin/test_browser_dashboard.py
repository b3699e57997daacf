"""The dashboard's 24-hour charts in Chromium at 1280x800 with the navigation sidebar open: both
charts and their legends are displayed, no wider than the viewport (no horizontal scrolling),
and drawn at a readable size; the screenshot is ``admin-dashboard-charts.png``."""

from datetime import timedelta

import pytest
from django.urls import reverse

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.store import get_store

from tests.support.samples import place_samples

from .conftest import VIEW_PERMISSIONS, make_user
from .test_browser import Page, browser  # noqa: F401  (the Chromium fixture)

pytestmark = pytest.mark.browser

QUEUES = ("billing", "emails", "reports", "video.transcode-long-queue-name")


def seed_samples():
    """A day of samples, one every 20 minutes: three queues with a daily wave of ready jobs,
    scheduled jobs apart, and outcomes with a few retries and dead jobs."""
    now = get_store().now()
    for step in range(72):
        at = now - timedelta(minutes=20 * step)
        for number, queue in enumerate(QUEUES):
            wave = (step * (number + 2) + 5) % 36
            place_samples(1, at, queue=queue, available=wave * (4 - number) * 5, scheduled=10 * number,
                          succeeded=30 + wave * 3, retried=wave % 7, dead=1 if wave % 11 == 0 else 0)
    MaintenanceRunner(get_settings(), duty_names=["dashboard_sample"]).run_once()  # the duty's last pass


def test_dashboard_charts_fit_1280x800_with_the_sidebar_open(browser, live_server):  # noqa: F811
    make_user("auditor", VIEW_PERMISSIONS)
    seed_samples()
    browser.set_window_size(1280, 800)
    page = Page(browser, live_server.url)
    page.log_in("auditor")
    page.driver.execute_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'true')")
    page.open(reverse("admin:headgate_dashboard"))

    assert page.find("#nav-sidebar").is_displayed()
    for chart in ("#headgate-outcomes svg.headgate-chart", "#headgate-depth svg.headgate-chart",
                  "#headgate-outcomes .headgate-legend", "#headgate-depth .headgate-depth-table"):
        element = page.find(chart)
        page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        assert page.fits_viewport(chart), chart
    widths = page.driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth,"
        " document.querySelector('#headgate-outcomes svg.headgate-chart').getBoundingClientRect().width,"
        " document.querySelector('#headgate-depth svg.headgate-chart').getBoundingClientRect().width]")
    page_width, viewport, outcome_width, depth_width = widths
    assert page_width <= viewport  # no horizontal scrolling
    assert outcome_width >= 560 and depth_width >= 560  # at least the charts' own size: 11 px labels stay 11 px
    bars = page.driver.find_elements(page.by.CSS_SELECTOR, "#headgate-outcomes g rect.headgate-segment-succeeded")
    assert len(bars) == 24
    lines = page.driver.find_elements(page.by.CSS_SELECTOR, "#headgate-depth .headgate-depth-line")
    assert len(lines) == len(QUEUES)
    assert "Retried (failed attempts run again)" in page.find("#headgate-outcomes .headgate-legend").text
    assert "scheduled now" in page.find("#headgate-depth").text.lower()
    page.driver.execute_script("document.querySelector('#headgate-outcomes').scrollIntoView()")
    page.screenshot("dashboard-charts")
