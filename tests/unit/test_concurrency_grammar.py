"""The grammar of concurrency options (values/concurrency.py, DESIGN §15): limits >= 1, key
templates formatted with kwargs, callables of (args, kwargs); bad ones raise HeadgateErrors."""

import pytest

from django_headgate.exceptions import HeadgateError, InvalidConcurrency, InvalidTaskOption
from django_headgate.registry import tasks as registry
from django_headgate.values.concurrency import check_concurrency_limit, check_key_option, render_concurrency_key


@pytest.mark.parametrize("limit", [0, -1, 1.5, "2", True])
def test_a_limit_is_an_integer_of_at_least_one(limit):
    with pytest.raises(InvalidConcurrency):
        check_concurrency_limit(limit)


def test_good_limits_and_none():
    assert check_concurrency_limit(1) == 1 and check_concurrency_limit(None) is None


def test_templates_format_with_kwargs():
    assert render_concurrency_key("account:{account_id}", "t", (), {"account_id": 42}) == "account:42"


def test_without_a_key_the_task_is_the_key():
    assert render_concurrency_key(None, "app.tasks.f", (1,), {}) == "app.tasks.f"


def test_callables_get_args_and_kwargs():
    assert render_concurrency_key(lambda args, kwargs: f"{args[0]}-{kwargs['b']}", "t", [1], {"b": 2}) == "1-2"


@pytest.mark.parametrize("key, kwargs", [
    ("account:{account_id}", {}),          # a missing kwarg
    ("account:{0}", {"x": 1}),             # a positional field
    ("account:{", {}),                     # malformed
    (lambda args, kwargs: 1 / 0, {}),      # a callable that raises
    (lambda args, kwargs: 42, {}),         # not a string
    (lambda args, kwargs: "", {}),         # empty
    ("x" * 300, {}),                       # too long
])
def test_bad_keys_raise(key, kwargs):
    with pytest.raises(InvalidConcurrency) as raised:
        render_concurrency_key(key, "t", (), kwargs)
    assert isinstance(raised.value, HeadgateError) and raised.value.field == "concurrency_key"


@pytest.mark.parametrize("key", ["", 42, "a:{0}", "a:{b.c}", "a:{"])
def test_bad_task_key_options_raise_invalid_task_option(key):
    with pytest.raises(InvalidTaskOption):
        check_key_option(key)


def module_level():
    return None


module_level.__module__ = "tests.unit.test_concurrency_grammar"


@pytest.mark.parametrize("options", [{"concurrency_limit": 0}, {"concurrency_key": "a:{b}"},
                                     {"concurrency_limit": 1, "concurrency_key": 3}, {"rate_limit": "abc/s"},
                                     {"rate_limit": "10/d"}, {"rate_limit": "0/s"}])
def test_the_task_decorator_refuses_bad_options(options):
    with pytest.raises(InvalidTaskOption):
        registry.task(**options)(module_level)
    assert not registry.is_registered("tests.unit.test_concurrency_grammar.module_level")
