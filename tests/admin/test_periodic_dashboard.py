"""The admin dashboard lists each periodic schedule with its last and next tick."""

import pytest
from django.urls import reverse

from tests.support.periodic import make_duty, tick_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_dashboard_lists_the_schedules(every_minute, tick_clock, admin_client):
    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    duty.run_once()
    response = admin_client.get(reverse("admin:headgate_dashboard"))
    assert response.status_code == 200
    (entry,) = response.context["periodic"]
    assert (entry["name"], entry["last_tick_at"]) == ("every_minute", tick_of(tick_clock.now))
    body = response.content.decode()
    assert 'id="headgate-periodic"' in body and "every_minute" in body and "* * * * * (UTC)" in body


def test_dashboard_without_schedules(admin_client):
    body = admin_client.get(reverse("admin:headgate_dashboard")).content.decode()
    assert "No schedule" in body
