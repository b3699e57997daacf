"""The admin in a real browser: headless Chromium driven by Selenium (DESIGN §9).

A policy editor logs in, is refused a bad archive policy with the API's message, saves a good
one, and finds the archive audit view withholding payloads (no reveal control for them); then
an auditor holding ``view_archive_payload`` reveals one record, and the reveal is in the admin
log. Screenshots of each step go to the temp directory; with ``HG_UPDATE_SCREENSHOTS=1`` they
replace ``docs/images/admin-*.png`` (used by docs/admin.md), so a plain test run leaves the
tree clean.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them). Without
``/usr/bin/chromedriver`` the test is skipped, except in CI (``CI=true``), where it fails.
"""

import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse
from django.utils import timezone

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import ArchivedJob, ArchivePolicy, Job, JobState
from tests.factories import WorkerHeartbeatFactory

from .conftest import PASSWORD, POLICY_PERMISSIONS, VIEW_PERMISSIONS, make_user
from .rows import SECRET_ARG, SECRET_KWARG, SECRET_RESULT, TRACEBACK, finish_at, make_archived, make_jobs

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = (ROOT / "docs" / "images" if os.environ.get("HG_UPDATE_SCREENSHOTS") == "1"
                  else Path(tempfile.gettempdir()) / "headgate-admin-screenshots")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1600,900",
)
WAIT_SECONDS = 20

pytestmark = pytest.mark.browser


def require_chromedriver():
    if shutil.which(CHROMEDRIVER) and shutil.which(CHROMIUM):
        return
    reason = (f"{CHROMEDRIVER} or {CHROMIUM} is missing: apt-get install chromium chromium-driver "
              "(.ci/run installs them)")
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


@pytest.fixture
def browser():
    require_chromedriver()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="headgate-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class Page:
    """A few steps on top of Selenium, with explicit waits."""

    def __init__(self, driver, base_url):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver, self.base_url, self.by = driver, base_url, By
        self.conditions, self.wait = expected_conditions, WebDriverWait(driver, WAIT_SECONDS)

    def open(self, path):
        self.driver.get(self.base_url + path)
        self.wait.until(lambda d: d.execute_script("return document.readyState") == "complete")

    def find(self, css):
        return self.wait.until(self.conditions.presence_of_element_located((self.by.CSS_SELECTOR, css)))

    def exists(self, css):
        return bool(self.driver.find_elements(self.by.CSS_SELECTOR, css))

    def type(self, css, text):
        field = self.find(css)
        field.clear()
        field.send_keys(text)

    def submit(self, css):
        old = self.find("body")
        self.find(css).click()
        self.wait.until(self.conditions.staleness_of(old))
        self.find("body")

    def text(self):
        return self.find("body").text

    def log_in(self, username):
        self.open(reverse("admin:login"))
        self.type("#id_username", username)
        self.type("#id_password", PASSWORD)
        self.submit("input[type=submit]")
        assert self.exists("#user-tools"), self.text()
        # Collapse the admin's navigation sidebar: more room for the tables in the screenshots.
        self.driver.execute_script("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")

    def log_out(self):
        self.submit("#logout-form button")

    def fits_viewport(self, css):
        """True when the first element matching ``css`` is displayed and lies wholly inside the
        viewport (no horizontal scrolling, no scrolling down)."""
        element = self.find(css)
        return element.is_displayed() and self.driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth"
            " && r.top >= 0 && r.bottom <= window.innerHeight;", element)

    def screenshot(self, name):
        """Save the whole page (beyond the viewport, through the DevTools protocol) as
        ``admin-<name>.png``."""
        import base64

        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 1400), "scale": 1}
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "clip": clip})
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOT_DIR / f"admin-{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

def seed_rows():
    """Jobs in every state, some finished over the last hour, two live workers, one maintenance
    pass and a few archived jobs: enough for every panel to show something."""
    make_jobs(3, queue="billing")
    make_jobs(1, queue="billing", state=JobState.RUNNING)
    make_jobs(2, queue="billing", state=JobState.DEAD)
    make_jobs(1, queue="emails", state=JobState.CANCELLED)
    finished = make_jobs(40, queue="emails", state=JobState.SUCCEEDED, tags=("newsletter",))
    now = timezone.now()
    for index, job in enumerate(finished):
        finish_at(job, now - timedelta(minutes=(index * 7) % 58))
    WorkerHeartbeatFactory(worker_id="worker-a", hostname="app-1", pid=4242, queues=["billing"])
    WorkerHeartbeatFactory(worker_id="worker-b", hostname="app-2", pid=4243, queues=[])
    MaintenanceRunner(get_settings()).run_once()
    make_archived(4, queue="billing", state=JobState.SUCCEEDED)
    make_archived(1, queue="billing", state=JobState.DEAD)

LIST_COLUMNS = ("state", "task", "queue", "attempts_display", "run_at_display", "finished_at_display")


def test_job_list_and_detail_fit_1280x800(browser, live_server):
    """At 1280x800 an operator sees every list column (the state first of all) and the actions
    without scrolling sideways, and a dead job's Retry button and traceback without scrolling.
    Tracebacks are task-written text, shown only with view_job_payload (docs/admin.md)."""
    make_user("operator", VIEW_PERMISSIONS + ("change_job", "view_job_payload"))
    seed_rows()
    dead = Job.objects.filter(state=JobState.DEAD).order_by("id").first()
    browser.set_window_size(1280, 800)
    page = Page(browser, live_server.url)
    page.log_in("operator")
    page.open(reverse("admin:headgate_job_changelist"))
    assert page.driver.execute_script("return window.innerWidth") <= 1280
    for column in LIST_COLUMNS:
        assert page.fits_viewport(f"#result_list thead th.column-{column}"), column
        assert page.fits_viewport(f"#result_list tbody td.field-{column}"), column
    assert page.driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth"), "the list scrolls sideways"
    assert page.fits_viewport("#changelist-form .actions select[name=action]")
    page.screenshot("job-list")

    page.open(reverse("admin:headgate_job_change", args=[dead.pk]))
    assert page.fits_viewport("#headgate-retry-button")
    traceback = page.find(".field-errors_display pre.headgate-text")
    assert traceback.text.strip() == TRACEBACK.strip()  # newlines kept, nothing JSON-escaped
    page.screenshot("job-detail")


def test_edit_policy_withhold_and_reveal_in_chromium(browser, live_server):
    make_user("editor", POLICY_PERMISSIONS + VIEW_PERMISSIONS)
    make_user("auditor", VIEW_PERMISSIONS + ("view_archive_payload", "view_job_payload"))
    seed_rows()
    archived = ArchivedJob.objects.defer("args", "kwargs", "result").filter(terminal_state="dead").get()
    page = Page(browser, live_server.url)

    # A policy editor: the API refuses 0 seconds, the form shows its message; 90d is saved.
    page.log_in("editor")
    page.open(reverse("admin:headgate_archivepolicy_add"))
    page.type("#id_queue", "billing")
    page.type("#id_archive_retention", "0s")
    page.submit("input[name=_save]")
    error = page.find(".field-archive_retention .errorlist").text
    assert "archive_retention must be from 1 second to 36,500 days" in error
    assert not ArchivePolicy.objects.exists()
    page.screenshot("policy-error")
    page.type("#id_archive_retention", "90d")
    page.submit("input[name=_save]")
    assert "was added successfully" in page.find(".messagelist").text
    assert ArchivePolicy.objects.get(queue="billing").archive_retention == timedelta(days=90)

    # The audit view withholds payloads and offers this user no reveal.
    page.open(reverse("admin:headgate_archivedjob_changelist"))
    assert str(archived.job_id) in page.text()
    page.screenshot("archive-list")
    page.open(reverse("admin:headgate_archivedjob_change", args=[archived.pk]))
    body = page.driver.page_source
    assert "withheld" in page.text()
    for secret in (SECRET_ARG, SECRET_KWARG, SECRET_RESULT):
        assert secret not in body
    assert not page.exists("#headgate-reveal-button")
    page.screenshot("archive-withheld")
    page.log_out()

    # An auditor with view_archive_payload reveals the record; the reveal is logged.
    page.log_in("auditor")
    page.open(reverse("admin:headgate_archivedjob_change", args=[archived.pk]))
    assert SECRET_ARG not in page.driver.page_source
    page.type("#id_reveal_reason", "chargeback review")
    page.screenshot("archive-reveal-control")
    page.submit("#headgate-reveal-button")
    payload = page.find("#headgate-payload").text
    for secret in (SECRET_ARG, SECRET_KWARG, SECRET_RESULT):
        assert secret in payload
    page.screenshot("archive-revealed")
    entry = LogEntry.objects.get(object_id=str(archived.pk))
    assert entry.user.username == "auditor"
    assert "chargeback review" in entry.get_change_message()

    # The job list with its state counts (the screenshot is taken at 1280x800 above), and the
    # dashboard, for the documentation.
    page.open(reverse("admin:headgate_job_changelist"))
    assert "Jobs per queue and state" in page.text()
    page.open(reverse("admin:headgate_dashboard"))
    assert "Jobs finished per minute" in page.text()
    page.screenshot("dashboard")
