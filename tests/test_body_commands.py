"""The pytest commands a report quotes from a PR's texts (prkb/render/body.py)."""

from __future__ import annotations

from prkb.render import body
from prkb.render.body import COMMAND_CHARS, MAX_COMMANDS

# (not imported by its name: pytest would collect a function named test_*)
commands = body.test_commands


def test_commands_found_in_any_text_sorted_and_unique() -> None:
    texts = [
        "Intro\n\n  pytest tests/b.py -k x  \nnot a command: run pytest later\n",
        "",
        "`python -m pytest tests/a.py`\r\npython3 -m pytest tests/c.py\npytest tests/b.py -k x",
    ]
    assert commands(texts) == [
        "pytest tests/b.py -k x", "python -m pytest tests/a.py", "python3 -m pytest tests/c.py",
    ]


def test_a_comment_inside_a_command_is_dropped_before_it_is_read() -> None:
    # "pytest" is written whole only once the comment is gone: still found
    assert commands(["py<!-- hidden -->test tests/x.py"]) == ["pytest tests/x.py"]
    # a command inside a comment is not one
    assert commands(["<!-- pytest tests/y.py -->\nok"]) == []


def test_whitespace_is_collapsed_and_nothing_else_joins_words() -> None:
    assert commands(["py test tests/x.py", "pytest\ttests/z.py   -q"]) == [
        "pytest tests/z.py -q"]
    # the word pytest must end where the line's first word ends or at a non-word character
    assert commands(["pytestx tests/x.py", "pytest-xdist"]) == ["pytest-xdist"]


def test_capped_in_length_and_count() -> None:
    long = "pytest " + "a" * (2 * COMMAND_CHARS)
    got = commands([long])
    assert len(got) == 1 and len(got[0]) == COMMAND_CHARS and got[0].endswith("…")
    many = "\n".join(f"pytest tests/t{i}.py" for i in range(MAX_COMMANDS + 3))
    assert len(commands([many])) == MAX_COMMANDS
