"""Admin test fixtures: one client per kind of user (DESIGN §9, §10).

- ``anonymous``: not logged in;
- ``staff``: a staff user without any permission;
- ``auditor``: staff with the view permissions of every Headgate model, no payload permission;
- ``payload_viewer``: an auditor who also holds ``view_job_payload`` and ``view_archive_payload``;
- ``operator``: an auditor who may retry and cancel jobs (``change_job``);
- ``policy_editor``: staff who may add, change and delete policies and add retention classes.
"""

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

VIEW_PERMISSIONS = ("view_job", "view_archivedjob", "view_retentionclass", "view_queuestoragepolicy",
                    "view_archivepolicy")
PAYLOAD_PERMISSIONS = ("view_job_payload", "view_archive_payload")
POLICY_PERMISSIONS = (
    "view_retentionclass", "add_retentionclass",
    "view_queuestoragepolicy", "add_queuestoragepolicy", "change_queuestoragepolicy",
    "delete_queuestoragepolicy",
    "view_archivepolicy", "add_archivepolicy", "change_archivepolicy", "delete_archivepolicy",
)
PASSWORD = "correct horse battery staple"


def make_user(username, codenames=(), *, is_staff=True):
    user = User.objects.create_user(username, password=PASSWORD, is_staff=is_staff)
    if codenames:
        user.user_permissions.set(
            Permission.objects.filter(content_type__app_label="headgate", codename__in=codenames))
    return user


def client_for(user):
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def anonymous(db):
    return Client()


@pytest.fixture
def staff(db):
    return client_for(make_user("staff"))


@pytest.fixture
def auditor(db):
    return client_for(make_user("auditor", VIEW_PERMISSIONS))


@pytest.fixture
def payload_viewer_user(db):
    return make_user("payload_viewer", VIEW_PERMISSIONS + PAYLOAD_PERMISSIONS)


@pytest.fixture
def payload_viewer(payload_viewer_user):
    return client_for(payload_viewer_user)


@pytest.fixture
def operator(db):
    return client_for(make_user("operator", VIEW_PERMISSIONS + ("change_job",)))


@pytest.fixture
def policy_editor(db):
    return client_for(make_user("policy_editor", POLICY_PERMISSIONS))
